//go:build unix

package filestore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/rooms/roomstest"
)

// The environment of a rooms contender process (TestHelperRoomsContender).
const (
	envRoomsRole  = "LEASETEST_ROOMS_ROLE"
	roleRooms     = "rooms-contender"
	envRoomsDir   = "LEASETEST_ROOMS_DIR"
	envRoomsNS    = "LEASETEST_ROOMS_NAMESPACE"
	envRoomsRoom  = "LEASETEST_ROOMS_ROOM"
	envRoomsProc  = "LEASETEST_ROOMS_PROCESS"
	envRoomsWins  = "LEASETEST_ROOMS_WINS"
	envRoomsOut   = "LEASETEST_ROOMS_OUT"
	roomsWorkers  = 2 // goroutines per process
	roomsProcs    = 4
	roomsWinsEach = 3
)

// TestRoomsAcrossProcesses: 4 processes × 2 goroutines campaign in one room of one directory;
// each winner renews and resigns. The merged terms are checked by roomstest.CheckGrants, on the
// host's CLOCK_MONOTONIC, which every process shares.
func TestRoomsAcrossProcesses(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // kills stuck contenders
	defer cancel()
	dir, outDir := t.TempDir(), t.TempDir()
	ns, room := leasetest.Namespace(t), rooms.NewRoomID()

	envs := make([][]string, roomsProcs)
	results := make([]string, roomsProcs)
	for i := range envs {
		results[i] = filepath.Join(outDir, fmt.Sprintf("process-%d.json", i))
		envs[i] = []string{envRoomsRole + "=" + roleRooms, envRoomsDir + "=" + dir, envRoomsNS + "=" + ns,
			envRoomsRoom + "=" + room, envRoomsProc + "=" + strconv.Itoa(i), envRoomsWins + "=" + strconv.Itoa(roomsWinsEach),
			envRoomsOut + "=" + results[i]}
	}
	elapsed := runTogether(ctx, t, "TestHelperRoomsContender", time.Minute, envs)
	var grants []roomstest.Grant
	for i, path := range results {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
		var got []roomstest.Grant
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
		grants = append(grants, got...)
	}
	if want := roomsProcs * roomsWorkers * roomsWinsEach; len(grants) != want {
		t.Fatalf("%d terms won, want %d", len(grants), want)
	}
	t.Logf("%d processes × %d goroutines won %d terms in %v", roomsProcs, roomsWorkers, len(grants), elapsed.Round(time.Millisecond))
	roomstest.CheckGrants(t, grants)
}

// TestHelperRoomsContender is one process of TestRoomsAcrossProcesses. Run any other way, it
// does nothing and passes.
func TestHelperRoomsContender(t *testing.T) {
	if os.Getenv(envRoomsRole) != roleRooms {
		return
	}
	wins, err := strconv.Atoi(os.Getenv(envRoomsWins))
	if err != nil {
		t.Fatal(err)
	}
	store, err := filestore.New(os.Getenv(envRoomsDir))
	if err != nil {
		t.Fatal(err)
	}
	m, err := rooms.New(store, os.Getenv(envRoomsNS))
	if err != nil {
		t.Fatal(err)
	}
	awaitStart(t)

	var (
		mu     sync.Mutex
		grants = []roomstest.Grant{}
		wg     sync.WaitGroup
	)
	for w := range roomsWorkers {
		wg.Go(func() {
			who := fmt.Sprintf("p%s-g%d", os.Getenv(envRoomsProc), w)
			got, err := roomstest.Contend(t.Context(), m, os.Getenv(envRoomsRoom), who, wins, hostMonotonic)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			grants = append(grants, got...)
			mu.Unlock()
		})
	}
	wg.Wait()
	data, err := json.Marshal(grants)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv(envRoomsOut), data, 0o600); err != nil {
		t.Fatal(err)
	}
}
