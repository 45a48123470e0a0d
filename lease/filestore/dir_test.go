package filestore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// TestRemovedDirectoryIsRecreated: a store directory removed while an election is held and a
// room is led is recreated by the next write, as a first start would create it, in whichever
// process comes first; that process reports the loss as damage, once however many of its
// goroutines found it. The election starts again with fences above the lost ones, the room
// with terms above the lost ones, and the holders of what was lost are told so: they do not
// hold it any more.
func TestRemovedDirectoryIsRecreated(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	first, second := openStore(t, dir), openStore(t, dir) // two processes
	firstReports, secondReports := collectDamage(first), collectDamage(second)
	holder := newElection(t, first, "dir", "h1", lease.WithTTL(5*time.Second))
	held, err := holder.TryAcquire(ctx)
	if err != nil || !held.Acquired {
		t.Fatalf("try-acquire: %+v, %v", held, err)
	}
	m := newRoomsManager(t, first)
	room := rooms.NewRoomID()
	led, err := m.Campaign(ctx, room, "a", 30*time.Second, "")
	if err != nil || led.Status != rooms.StatusLeader {
		t.Fatalf("campaign: %+v, %v", led, err)
	}

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	// Reads find nothing, and neither create nor report anything.
	if _, _, err := second.Load(ctx, "dir"); !errors.Is(err, lease.ErrNotFound) {
		t.Fatalf("load from a removed directory: %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a read recreated the directory: %v", err)
	}

	// Another process's contender takes the election anew, above every fence of the lost one.
	taker := newElection(t, second, "dir", "h2", lease.WithTTL(5*time.Second))
	took, err := taker.TryAcquire(ctx)
	if err != nil || !took.Acquired {
		t.Fatalf("try-acquire on a removed directory: %+v, %v", took, err)
	}
	if took.Grant.Fence <= held.Grant.Fence {
		t.Fatalf("fence %d after the directory was recreated, but %d was granted before", took.Grant.Fence, held.Grant.Fence)
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("the recreated directory: %v, %v, want mode 0700", info, err)
	}
	if d := secondReports(); len(d) != 1 || d[0].Where != dir {
		t.Fatalf("the recreating process reported %+v, want the directory once", d)
	}
	// The lost term's holder learns it holds nothing, rather than renewing a lease it lost.
	if _, err := holder.Renew(ctx, held.Grant.Fence); !errors.Is(err, lease.ErrNotHolder) {
		t.Fatalf("renewing the lost term: %v, want ErrNotHolder", err)
	}
	if _, err := m.Renew(ctx, room, led.Token, 30*time.Second); !errors.Is(err, rooms.ErrVacant) {
		t.Fatalf("renewing the lost room: %v, want ErrVacant", err)
	}
	if d := firstReports(); len(d) != 0 {
		t.Fatalf("the process that found the directory already recreated reported %+v", d)
	}

	// Removed again: many goroutines of one process find it at once; one report.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	results := make([]rooms.Result, 8)
	for i := range results {
		wg.Go(func() {
			res, err := m.Campaign(ctx, rooms.NewRoomID(), "b", 30*time.Second, "")
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		})
	}
	wg.Wait()
	if d := firstReports(); len(d) != 1 || d[0].Where != dir {
		t.Fatalf("8 campaigns on a removed directory reported %+v, want the directory once", d)
	}
	res, err := m.Campaign(ctx, room, "c", 30*time.Second, "")
	if err != nil || res.Status != rooms.StatusLeader || res.Leader.Term <= led.Leader.Term {
		t.Fatalf("campaign for the lost room: %+v, %v, want a term above %d", res, err, led.Leader.Term)
	}

	// /readyz's check recreates it too: the store can write.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := second.CheckWritable(ctx); err != nil {
		t.Fatalf("CheckWritable on a removed directory: %v", err)
	}
	if d := secondReports(); len(d) != 2 {
		t.Fatalf("reports %+v, want a second one", d)
	}
}
