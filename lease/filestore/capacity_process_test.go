//go:build unix

package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// The environment of a capacity contender process (TestHelperCapacityContender).
const (
	envCapacityRole = "LEASETEST_CAPACITY_ROLE"
	roleCapacity    = "capacity-contender"
	envCapacityDir  = "LEASETEST_CAPACITY_DIR"
	envCapacityNS   = "LEASETEST_CAPACITY_NAMESPACE"
	envCapacityOut  = "LEASETEST_CAPACITY_OUT"
	capacityProcs   = 4
	capacityWorkers = 8 // goroutines per process
	capacityTries   = 8 // campaigns per goroutine, each for a new room
	capacityLimit   = 40
	capacityTTL     = time.Minute // no room ends during the test
)

// TestCapacityAcrossProcesses: 4 processes × 8 goroutines campaign for new rooms of one
// namespace (64 shards) at once, 256 campaigns for 40 places: exactly 40 win — the active-room
// limit holds across processes while each process's activations run side by side — and a
// campaign afterwards is refused.
func TestCapacityAcrossProcesses(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // kills stuck contenders
	defer cancel()
	dir, outDir := t.TempDir(), t.TempDir()
	ns := leasetest.Namespace(t)
	envs := make([][]string, capacityProcs)
	results := make([]string, capacityProcs)
	for i := range envs {
		results[i] = filepath.Join(outDir, fmt.Sprintf("process-%d.txt", i))
		envs[i] = []string{envCapacityRole + "=" + roleCapacity, envCapacityDir + "=" + dir, envCapacityNS + "=" + ns,
			envCapacityOut + "=" + results[i]}
	}
	elapsed := runTogether(ctx, t, "TestHelperCapacityContender", time.Minute, envs)
	won := 0
	for i, path := range results {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
		n, err := strconv.Atoi(string(data))
		if err != nil {
			t.Fatalf("process %d: %q: %v", i, data, err)
		}
		won += n
	}
	t.Logf("%d processes × %d goroutines × %d campaigns: %d won in %v", capacityProcs, capacityWorkers, capacityTries, won, elapsed.Round(time.Millisecond))
	if won != capacityLimit {
		t.Fatalf("%d campaigns won, want %d (the limit)", won, capacityLimit)
	}
	m := newCapacityManager(t, dir, ns)
	if _, err := m.Campaign(ctx, rooms.NewRoomID(), "late", capacityTTL, ""); !errors.Is(err, rooms.ErrCapacity) {
		t.Fatalf("a campaign with %d rooms active: %v, want a capacity refusal", capacityLimit, err)
	}
}

func newCapacityManager(t *testing.T, dir, ns string) *rooms.Manager {
	t.Helper()
	store, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := rooms.New(store, ns, rooms.WithMaxActiveRooms(capacityLimit))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestHelperCapacityContender is one process of TestCapacityAcrossProcesses; it writes how many
// of its campaigns won. Run any other way, it does nothing and passes.
func TestHelperCapacityContender(t *testing.T) {
	if os.Getenv(envCapacityRole) != roleCapacity {
		return
	}
	m := newCapacityManager(t, os.Getenv(envCapacityDir), os.Getenv(envCapacityNS))
	awaitStart(t)
	var won atomic.Int64
	var wg sync.WaitGroup
	for w := range capacityWorkers {
		wg.Go(func() {
			for range capacityTries {
				_, err := m.Campaign(t.Context(), rooms.NewRoomID(), fmt.Sprintf("g%d", w), capacityTTL, "")
				switch {
				case err == nil:
					won.Add(1)
				case !errors.Is(err, rooms.ErrCapacity):
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := os.WriteFile(os.Getenv(envCapacityOut), []byte(strconv.FormatInt(won.Load(), 10)), 0o600); err != nil {
		t.Fatal(err)
	}
}
