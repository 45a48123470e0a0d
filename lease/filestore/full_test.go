package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// TestFullDiskLeavesNothingBehind: on a real file system that is out of space, a new rooms
// shard and a new election fail with lease.ErrStoreFull naming the path, leave no partial or
// temporary file, CheckWritable says so too; once space returns, every one of them works
// without anyone removing a file. An existing election's writes go on meanwhile: they rewrite
// blocks its file already has.
func TestFullDiskLeavesNothingBehind(t *testing.T) {
	ctx := context.Background()
	dir := leasetest.SmallFS(t, "4m")
	s := openStore(t, dir)
	m := newRoomsManager(t, s)
	e, err := lease.New(s, "full", lease.Identity{HolderID: "h"}, lease.WithTTL(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	won, err := e.TryAcquire(ctx) // the election's file exists
	if err != nil || !won.Acquired {
		t.Fatalf("try-acquire: %+v, %v", won, err)
	}
	filler := leasetest.Fill(t, dir)

	_, err = m.Campaign(ctx, rooms.NewRoomID(), "a", 30*time.Second, "")
	if !errors.Is(err, lease.ErrStoreFull) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("campaign on a full disk: %v, want ErrStoreFull naming %s", err, dir)
	}
	other, err := lease.New(s, "full-new", lease.Identity{HolderID: "h"}, lease.WithTTL(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.TryAcquire(ctx); !errors.Is(err, lease.ErrStoreFull) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("a new election on a full disk: %v, want ErrStoreFull naming %s", err, dir)
	}
	if _, err := e.Renew(ctx, won.Grant.Fence); err != nil {
		t.Fatalf("renewing an existing election on a full disk: %v", err)
	}
	if err := s.CheckWritable(ctx); !errors.Is(err, lease.ErrStoreFull) {
		t.Fatalf("CheckWritable on a full disk: %v", err)
	}
	if left := leftovers(t, dir); len(left) != 0 {
		t.Fatalf("a full disk left %v behind", left)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckWritable(ctx); err != nil {
		t.Fatalf("CheckWritable once space returned: %v", err)
	}
	if res, err := m.Campaign(ctx, rooms.NewRoomID(), "a", 30*time.Second, ""); err != nil || res.Status != rooms.StatusLeader {
		t.Fatalf("campaign once space returned: %+v, %v", res, err)
	}
	if err := e.Release(ctx, won.Grant.Fence); err != nil {
		t.Fatalf("release once space returned: %v", err)
	}
	if res, err := other.TryAcquire(ctx); err != nil || !res.Acquired {
		t.Fatalf("a new election once space returned: %+v, %v", res, err)
	}
	if left := leftovers(t, dir); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// leftovers lists the temporary files and empty slots in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	tmp, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	out = append(out, tmp...)
	slots, _ := filepath.Glob(filepath.Join(dir, "*.rooms-*.[ab]"))
	for _, p := range slots {
		if info, err := os.Stat(p); err == nil && info.Size() == 0 {
			out = append(out, p)
		}
	}
	return out
}

// TestReadOnlyFileSystemIsPermission: a store whose file system was remounted read-only fails
// with lease.ErrPermission naming the file — not "store unreachable" — and works again once it
// is writable.
func TestReadOnlyFileSystemIsPermission(t *testing.T) {
	ctx := context.Background()
	dir := leasetest.SmallFS(t, "4m")
	s := openStore(t, dir)
	m := newRoomsManager(t, s)
	room := rooms.NewRoomID()
	res, err := m.Campaign(ctx, room, "a", 30*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	remount(t, dir, "ro")
	_, err = m.Renew(ctx, room, res.Token, 30*time.Second)
	if !errors.Is(err, lease.ErrPermission) || errors.Is(err, lease.ErrUnavailable) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("renew on a read-only file system: %v, want ErrPermission naming %s", err, dir)
	}
	if err := s.CheckWritable(ctx); !errors.Is(err, lease.ErrPermission) {
		t.Fatalf("CheckWritable on a read-only file system: %v", err)
	}
	remount(t, dir, "rw")
	if _, err := m.Renew(ctx, room, res.Token, 30*time.Second); err != nil {
		t.Fatalf("renew once writable again: %v", err)
	}
}

func remount(t *testing.T, dir, mode string) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,"+mode, dir).CombinedOutput(); err != nil {
		t.Fatalf("remount %s %s: %v: %s", dir, mode, err, out)
	}
}

// TestEmptySlotIsNeverWritten: the empty slot that an earlier release's failed first write
// left behind is a shard never written, not damage: the next campaign creates the shard.
func TestEmptySlotIsNeverWritten(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	m := newRoomsManager(t, s)
	room := rooms.NewRoomID()
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("damage.rooms-%02d.a", m.ShardOf(room))), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var reports []rooms.Damage
	s.OnDamage(func(d rooms.Damage) { reports = append(reports, d) })
	if res, err := m.Campaign(ctx, room, "a", 30*time.Second, ""); err != nil || res.Status != rooms.StatusLeader {
		t.Fatalf("campaign beside an empty slot: %+v, %v", res, err)
	}
	if len(reports) != 0 {
		t.Fatalf("an empty slot of a shard never written was reported: %+v", reports)
	}
}

// TestFullDiskAtEveryStepOfACreation: a new rooms shard and a new election are created on a
// full file system given back one page at a time, so that space runs out at every step of the
// creation in turn — the version table, the first slot, the second slot; the election's file.
// Every refused creation fails with lease.ErrStoreFull and leaves nothing that reads as state:
// no temporary file, no room held by a leader nobody was told of, no election, and nothing a
// store opened afterwards reports as damage. Then an existing shard that must grow on a full
// disk is refused the same way, keeping what it held.
func TestFullDiskAtEveryStepOfACreation(t *testing.T) {
	ctx := context.Background()
	dir := leasetest.SmallFS(t, "4m")
	s := openStore(t, dir)
	m := newRoomsManager(t, s)
	reports := collectDamage(s)
	page := int64(os.Getpagesize())

	// checkNothing checks that a store opened afresh on dir (a restarted server) finds room
	// vacant ("": no room to check), the election "fresh" absent, no leftovers and no damage.
	checkNothing := func(step, room string) {
		t.Helper()
		if left := leftovers(t, dir); len(left) != 0 {
			t.Fatalf("%s: a refused creation left %v behind", step, left)
		}
		fresh := openStore(t, dir)
		freshReports := collectDamage(fresh)
		if room != "" {
			if st, err := newRoomsManager(t, fresh).Status(ctx, room); err != nil || st.Status != rooms.StatusVacant {
				t.Fatalf("%s: a refused campaign left the room %+v (%v), want it vacant", step, st, err)
			}
		}
		if _, _, err := fresh.Load(ctx, "fresh"); !errors.Is(err, lease.ErrNotFound) {
			t.Fatalf("%s: a refused election left %v, want it absent", step, err)
		}
		if d := freshReports(); len(d) != 0 {
			t.Fatalf("%s: a refused creation reads as damage: %+v", step, d)
		}
	}
	// create runs try until it is not refused for space, giving the file system back a page
	// after every refusal.
	create := func(what string, try func() error, room string) {
		t.Helper()
		filler := leasetest.Fill(t, dir)
		size, err := os.Stat(filler)
		if err != nil {
			t.Fatal(err)
		}
		for free := int64(0); ; free++ {
			err := try()
			if err == nil {
				t.Logf("%s: created with %d page(s) given back", what, free)
				return
			}
			if !errors.Is(err, lease.ErrStoreFull) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("%s with %d page(s) free: %v, want ErrStoreFull naming %s", what, free, err, dir)
			}
			checkNothing(fmt.Sprintf("%s with %d page(s) free", what, free), room)
			if free == 8 {
				t.Fatalf("%s: still refused with 8 pages free", what)
			}
			if err := os.Truncate(filler, size.Size()-(free+1)*page); err != nil {
				t.Fatal(err)
			}
		}
	}

	room := rooms.NewRoomID()
	create("a new shard", func() error {
		res, err := m.Campaign(ctx, room, "a", 30*time.Second, "")
		if err == nil && res.Status != rooms.StatusLeader {
			t.Fatalf("campaign on a new shard: %+v", res)
		}
		return err
	}, room)
	e, err := lease.New(s, "fresh", lease.Identity{HolderID: "h"}, lease.WithTTL(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	create("a new election", func() error {
		res, err := e.TryAcquire(ctx)
		if err == nil && !res.Acquired {
			t.Fatalf("try-acquire of a new election: %+v", res)
		}
		return err
	}, "")

	// An existing shard's write that needs more blocks than its slot has.
	filler := leasetest.Fill(t, dir)
	shard := m.ShardOf(room)
	var won []string
	for {
		other := rooms.NewRoomID()
		if m.ShardOf(other) != shard {
			continue
		}
		_, err := m.Campaign(ctx, other, strings.Repeat("c", 64), 30*time.Second, strings.Repeat("m", 200))
		if err == nil {
			won = append(won, other)
			continue
		}
		if !errors.Is(err, lease.ErrStoreFull) {
			t.Fatalf("campaign on a growing shard of a full disk: %v, want ErrStoreFull", err)
		}
		fresh := openStore(t, dir)
		freshReports := collectDamage(fresh)
		fm := newRoomsManager(t, fresh)
		for _, id := range append(won, room) {
			if st, err := fm.Status(ctx, id); err != nil || st.Status != rooms.StatusLeader {
				t.Fatalf("room %s won before the refused write: %+v, %v", id, st, err)
			}
		}
		if st, err := fm.Status(ctx, other); err != nil || st.Status != rooms.StatusVacant {
			t.Fatalf("the refused campaign's room: %+v, %v, want it vacant", st, err)
		}
		if d := freshReports(); len(d) != 0 {
			t.Fatalf("a refused growth reads as damage: %+v", d)
		}
		break
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if d := reports(); len(d) != 0 {
		t.Fatalf("damage reported: %+v", d)
	}
}

// collectDamage returns what s reports as damage from now on.
func collectDamage(s *filestore.Store) func() []rooms.Damage {
	var mu sync.Mutex
	var reports []rooms.Damage
	s.OnDamage(func(d rooms.Damage) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, d)
	})
	return func() []rooms.Damage {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(reports)
	}
}
