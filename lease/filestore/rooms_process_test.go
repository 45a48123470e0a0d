//go:build unix

package filestore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
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

	startR, startW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer startW.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer readyR.Close()
	cmds := make([]*exec.Cmd, roomsProcs)
	outputs := make([]*bytes.Buffer, roomsProcs)
	results := make([]string, roomsProcs)
	for i := range cmds {
		results[i] = filepath.Join(outDir, fmt.Sprintf("process-%d.json", i))
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperRoomsContender$", "-test.count=1", "-test.timeout=1m")
		cmd.Env = append(os.Environ(), envRoomsRole+"="+roleRooms, envRoomsDir+"="+dir, envRoomsNS+"="+ns,
			envRoomsRoom+"="+room, envRoomsProc+"="+strconv.Itoa(i), envRoomsWins+"="+strconv.Itoa(roomsWinsEach),
			envRoomsOut+"="+results[i])
		cmd.ExtraFiles = []*os.File{startR, readyW}
		outputs[i] = new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = outputs[i], outputs[i]
		if err := cmd.Start(); err != nil {
			t.Fatalf("start process %d: %v", i, err)
		}
		cmds[i] = cmd
	}
	startR.Close()
	readyW.Close()
	ready := make([]byte, roomsProcs)
	n, readyErr := io.ReadFull(readyR, ready)
	began := time.Now()
	startW.Close() // releases every process at once
	failed := false
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			failed = true
			t.Errorf("process %d: %v\n%s", i, err, outputs[i])
		}
	}
	if readyErr != nil {
		t.Fatalf("only %d of %d processes got ready: %v", n, roomsProcs, readyErr)
	}
	if failed {
		t.FailNow()
	}
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
	t.Logf("%d processes × %d goroutines won %d terms in %v", roomsProcs, roomsWorkers, len(grants), time.Since(began).Round(time.Millisecond))
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
	readyW, startR := os.NewFile(readyFD, "ready"), os.NewFile(startFD, "start")
	if _, err := readyW.Write([]byte{1}); err != nil {
		t.Fatalf("signal ready: %v", err)
	}
	readyW.Close()
	if _, err := io.Copy(io.Discard, startR); err != nil { // returns when the parent closes it
		t.Fatalf("wait for the start: %v", err)
	}
	startR.Close()

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
