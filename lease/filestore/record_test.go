package filestore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

const recordMagic = "lfp-swarm-lease-lease-slot 1 "

// inode returns the inode number and size of the file at path.
func inode(t *testing.T, path string) (ino uint64, size int64) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Sys().(*syscall.Stat_t).Ino, info.Size()
}

func newElection(t *testing.T, s lease.Store, ns, holder string, opts ...lease.Option) *lease.Election {
	t.Helper()
	e, err := lease.New(s, ns, lease.Identity{HolderID: holder}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestRecordWritesInPlace: once an election's file exists, every write — a renewal, a release,
// another holder's new term — rewrites it in place: the same inode, the same size, no rename
// (which is what costs a directory sync); the record read back is the one written.
func TestRecordWritesInPlace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	a, b := newElection(t, s, "jobs", "a"), newElection(t, s, "jobs", "b")
	won, err := a.TryAcquire(ctx)
	if err != nil || !won.Acquired {
		t.Fatalf("try-acquire: %+v, %v", won, err)
	}
	path := filepath.Join(dir, "jobs.lease.json")
	ino, size := inode(t, path)
	if size != 8192 {
		t.Fatalf("a new election's file is %d bytes, want two slots of 4 KiB", size)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), recordMagic) || !strings.HasPrefix(string(data[4096:]), recordMagic) {
		t.Fatalf("not two slots: %q", data[:80])
	}
	lastVersion := won.Grant.Version
	check := func(what string, want lease.Record) {
		t.Helper()
		if i, n := inode(t, path); i != ino || n != size {
			t.Fatalf("after %s: inode %d, %d bytes; want the same file (inode %d, %d bytes)", what, i, n, ino, size)
		}
		got, ver, err := s.Load(ctx, "jobs")
		if err != nil || !got.Equal(want) || ver <= lastVersion {
			t.Fatalf("after %s: %+v at version %d (%v); want %+v above version %d", what, got, ver, err, want, lastVersion)
		}
		lastVersion = ver
	}
	renewed, err := a.Renew(ctx, won.Grant.Fence)
	if err != nil {
		t.Fatal(err)
	}
	check("a renewal", renewed.Record)
	if err := a.Release(ctx, won.Grant.Fence); err != nil {
		t.Fatal(err)
	}
	released, _, _ := s.Load(ctx, "jobs")
	if released.Held() || released.Fence != won.Grant.Fence {
		t.Fatalf("after the release: %+v", released)
	}
	lastVersion--
	check("a release", released)
	next, err := b.TryAcquire(ctx)
	if err != nil || !next.Acquired || next.Grant.Fence != won.Grant.Fence+1 {
		t.Fatalf("the next term: %+v, %v; want fence %d", next, err, won.Grant.Fence+1)
	}
	check("a new term", next.Grant.Record)
}

// TestReleaseFlushesAfterTheLockGoes: a renewal's slot is flushed while the election's lock is
// held, so no one writes on a record that may not survive a power loss; a release's slot is
// flushed after the lock has gone, so that a successor's acquisition overlaps it, and Release
// returns only after that flush.
func TestReleaseFlushesAfterTheLockGoes(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	a := newElection(t, s, "jobs", "a")
	won, err := a.TryAcquire(ctx) // a new file: renamed into place, no in-place flush
	if err != nil || !won.Acquired {
		t.Fatalf("try-acquire: %+v, %v", won, err)
	}
	var flushes []string
	filestore.OnRecordFlush(t, func(path string) {
		state := "unlocked"
		if filestore.ElectionLocked(t, s, "jobs") {
			state = "locked"
		}
		flushes = append(flushes, filepath.Base(path)+" "+state)
	})
	if _, err := a.Renew(ctx, won.Grant.Fence); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, won.Grant.Fence); err != nil {
		t.Fatal(err)
	}
	want := []string{"jobs.lease.json locked", "jobs.lease.json unlocked"}
	if strings.Join(flushes, ", ") != strings.Join(want, ", ") {
		t.Fatalf("flushes (renewal, release): %q, want %q", flushes, want)
	}
}

// handOver runs a handover on a fresh store in dir: a acquires, renews and releases, b
// acquires. It returns the store, b's grant, a's renewal and the file's bytes before and after
// b's acquisition.
func handOver(t *testing.T, dir string) (s *filestore.Store, bTerm, aRenewal lease.Grant, released, after []byte) {
	t.Helper()
	ctx := context.Background()
	s = openStore(t, dir)
	a, b := newElection(t, s, "jobs", "a", lease.WithTTL(30*time.Second)), newElection(t, s, "jobs", "b", lease.WithTTL(30*time.Second))
	won, err := a.TryAcquire(ctx)
	if err != nil || !won.Acquired {
		t.Fatalf("a's try-acquire: %+v, %v", won, err)
	}
	if aRenewal, err = a.Renew(ctx, won.Grant.Fence); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, won.Grant.Fence); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "jobs.lease.json")
	released, _ = os.ReadFile(path)
	took, err := b.TryAcquire(ctx)
	if err != nil || !took.Acquired {
		t.Fatalf("b's try-acquire: %+v, %v", took, err)
	}
	after, _ = os.ReadFile(path)
	return s, took.Grant, aRenewal, released, after
}

// slotHolding returns which slot of the two-slot election file holds version ver, or -1.
func slotHolding(file []byte, ver lease.Version) int {
	size := len(file) / 2
	for i := range 2 {
		if strings.HasPrefix(string(file[i*size:]), recordMagic+uitoa(uint64(ver))+" ") {
			return i
		}
	}
	return -1
}

// TestAcquisitionAfterAReleaseKeepsTheLastHeldRecord: the write after a release goes into the
// release's own slot, so the other slot keeps the last held record until a write after the
// release has been flushed (the release's own flush may not have happened yet). A power loss
// that tears the acquisition's slot then leaves the last held record, and the store repairs
// from it: the fence rises above the lost term's, and the lost term's holder is told it does not
// hold the lease — where writing over the last held record could have left no whole slot.
func TestAcquisitionAfterAReleaseKeepsTheLastHeldRecord(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, bTerm, aRenewal, released, after := handOver(t, dir)
	releaseSlot := 1 - slotHolding(released, aRenewal.Version)
	if slotHolding(released, aRenewal.Version) < 0 {
		t.Fatal("after the release, no slot holds a's renewal")
	}
	if got := slotHolding(after, bTerm.Version); got != releaseSlot {
		t.Fatalf("b's acquisition went into slot %d; want the release's slot %d", got, releaseSlot)
	}
	if got := slotHolding(after, aRenewal.Version); got != 1-releaseSlot {
		t.Fatalf("after b's acquisition a's renewal is in slot %d; want it kept in slot %d", got, 1-releaseSlot)
	}

	// A power loss before any flush: the acquisition's slot torn.
	size := len(after) / 2
	after[releaseSlot*size+filestore.SlotLength(t, after, releaseSlot)-2] ^= 0x01
	if err := os.WriteFile(filepath.Join(dir, "jobs.lease.json"), after, 0o600); err != nil {
		t.Fatal(err)
	}
	a := newElection(t, s, "jobs", "a", lease.WithTTL(30*time.Second))
	if _, err := a.Renew(ctx, aRenewal.Fence); !errors.Is(err, lease.ErrNotHolder) { // the write that repairs
		t.Fatalf("a's renewal of its released term: %v; want ErrNotHolder", err)
	}
	b := newElection(t, s, "jobs", "b", lease.WithTTL(30*time.Second))
	if _, err := b.Renew(ctx, bTerm.Fence); !errors.Is(err, lease.ErrNotHolder) {
		t.Fatalf("b's renewal of the lost term: %v; want ErrNotHolder", err)
	}
	rec, _, err := s.Load(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	if rec.HolderID != "a" || rec.Fence <= bTerm.Fence {
		t.Fatalf("repaired record: holder %q fence %d; want a's last held record with a fence above the lost term's %d", rec.HolderID, rec.Fence, bTerm.Fence)
	}
}

// TestReadBesideAWriteInProgressWaitsForIt: a lock-free read that finds a slot not whole reads
// under the lock, because the slot being written may be the current one (the write after a
// release): the whole slot beside it is then older than the record it replaces, and serving it
// would take the election back to the term the release ended.
func TestReadBesideAWriteInProgressWaitsForIt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, bTerm, _, _, after := handOver(t, dir)
	path := filepath.Join(dir, "jobs.lease.json")
	inProgress := bytes.Clone(after)
	at := slotHolding(after, bTerm.Version)
	inProgress[at*(len(after)/2)+filestore.SlotLength(t, after, at)-2] ^= 0x01 // the acquisition half written
	unlock := filestore.HoldElectionLock(t, s, "jobs")                         // its writer holds the lock
	if err := os.WriteFile(path, inProgress, 0o600); err != nil {
		t.Fatal(err)
	}
	type loaded struct {
		rec lease.Record
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		rec, _, err := s.Load(ctx, "jobs")
		done <- loaded{rec, err}
	}()
	select {
	case got := <-done:
		unlock()
		t.Fatalf("the read returned during the write: %+v, %v", got.rec, got.err)
	case <-time.After(100 * time.Millisecond): // a bounded check that it waits, not a synchronisation
	}
	if err := os.WriteFile(path, after, 0o600); err != nil { // the write completes
		t.Fatal(err)
	}
	unlock()
	got := <-done
	if got.err != nil || got.rec.HolderID != "b" || got.rec.Fence != bTerm.Fence {
		t.Fatalf("the read after the write: %+v, %v; want b's term with fence %d", got.rec, got.err, bTerm.Fence)
	}
}

// TestFormat1FileIsUpgraded: an election file an earlier version wrote (one JSON document,
// schema 1) is read as it is, and the next write turns it into a two-slot file that continues
// its fence counter and versions.
func TestFormat1FileIsUpgraded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "jobs.lease.json")
	now := time.Now().UTC().Truncate(time.Microsecond)
	old, err := json.MarshalIndent(map[string]any{
		"schema": 1, "version": 1764000000000000000, "namespace": "jobs", "holder_id": "a", "node_id": "n1", "task_id": "",
		"fence": 1764000000000042, "acquired_at": now, "renewed_at": now, "expires_at": now.Add(time.Minute), "ttl_ms": 60000,
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(old, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir)
	rec, ver, err := s.Load(ctx, "jobs")
	if err != nil || rec.HolderID != "a" || rec.NodeID != "n1" || rec.Fence != 1764000000000042 || ver != 1764000000000000000 ||
		!rec.ExpiresAt.Equal(now.Add(time.Minute)) || rec.TTL != time.Minute {
		t.Fatalf("reading a format-1 file: %+v at version %d, %v", rec, ver, err)
	}
	a := newElection(t, s, "jobs", "a", lease.WithTTL(time.Minute))
	won, err := a.TryAcquire(ctx) // the holder itself: a new term at once
	if err != nil || !won.Acquired || won.Grant.Fence != 1764000000000043 || won.Grant.Version <= ver {
		t.Fatalf("the first write over a format-1 file: %+v, %v", won, err)
	}
	data, _ := os.ReadFile(path)
	if len(data) != 8192 || !strings.HasPrefix(string(data), recordMagic) {
		t.Fatalf("after the first write the file is %d bytes starting %q; want two slots", len(data), data[:min(len(data), 40)])
	}
	if got, _, err := s.Load(ctx, "jobs"); err != nil || !got.Equal(won.Grant.Record) {
		t.Fatalf("read back: %+v, %v; want %+v", got, err, won.Grant.Record)
	}
}

// TestRecordOutgrowsItsSlots: a record too long for its file's slots (long ids) makes the file
// rewritten whole with slots large enough, and later writes go in place again.
func TestRecordOutgrowsItsSlots(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	if _, err := newElection(t, s, "jobs", "a").Init(ctx); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "jobs.lease.json")
	if _, size := inode(t, path); size != 8192 {
		t.Fatalf("a new file of %d bytes", size)
	}
	long := newElection(t, s, "jobs", strings.Repeat("h", 5000))
	won, err := long.TryAcquire(ctx)
	if err != nil || !won.Acquired {
		t.Fatalf("try-acquire with a 5,000-byte holder id: %+v, %v", won, err)
	}
	ino, size := inode(t, path)
	if size != 2*8192 {
		t.Fatalf("the file is %d bytes; want two 8 KiB slots", size)
	}
	if _, err := long.Renew(ctx, won.Grant.Fence); err != nil {
		t.Fatal(err)
	}
	if i, n := inode(t, path); i != ino || n != size {
		t.Fatal("the renewal did not write in place")
	}
	if got, _, err := s.Load(ctx, "jobs"); err != nil || got.HolderID != strings.Repeat("h", 5000) {
		t.Fatalf("read back: %v", err)
	}
	if err := long.Release(ctx, won.Grant.Fence); err != nil {
		t.Fatal(err)
	}
	huge := newElection(t, s, "jobs", strings.Repeat("h", 2<<20))
	if _, err := huge.TryAcquire(ctx); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Fatalf("a record of over 2 MiB: %v; want a refusal that says it does not fit", err)
	}
}

// TestDamagedNewestSlotRepairsTheElection: when the slot holding the newest record is damaged
// after the write was acknowledged, the store serves the older slot — and before anything else
// is written, repairs it so that nothing issued before is issued again: the fence rises above
// every fence the lost record could have carried (the holder's renewal is told it no longer
// holds), no one else takes over before a full TTL from the repair, the version rises above the
// lost one, and the damage is reported.
func TestDamagedNewestSlotRepairsTheElection(t *testing.T) {
	ctx := context.Background()
	for name, damage := range map[string]func(slot []byte){
		"payload byte": func(slot []byte) { slot[120] ^= 0x01 },
		"header digit": func(slot []byte) { slot[len(recordMagic)+3] ^= 0x01 },
		"zeroed":       func(slot []byte) { clear(slot) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			var reports []rooms.Damage
			s.OnDamage(func(d rooms.Damage) { reports = append(reports, d) })
			const ttl = 30 * time.Second
			a, b := newElection(t, s, "jobs", "a", lease.WithTTL(ttl)), newElection(t, s, "jobs", "b", lease.WithTTL(ttl))
			won, err := a.TryAcquire(ctx)
			if err != nil || !won.Acquired {
				t.Fatal(err)
			}
			renewed, err := a.Renew(ctx, won.Grant.Fence) // the newest record; the older slot holds the acquisition
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "jobs.lease.json")
			data, _ := os.ReadFile(path)
			newest := 0
			if strings.Contains(string(data[4096:]), `"version":`+uitoa(uint64(renewed.Version))) {
				newest = 1
			}
			damage(data[newest*4096 : (newest+1)*4096])
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			// A lock-free read cannot tell damage from a write in progress: the older slot.
			if rec, ver, err := s.Load(ctx, "jobs"); err != nil || ver != won.Grant.Version || rec.Fence != won.Grant.Fence {
				t.Fatalf("load beside the damaged slot: %+v at %d, %v; want the acquisition at %d", rec, ver, err, won.Grant.Version)
			}
			repairedAt := time.Now()
			if _, err := a.Renew(ctx, won.Grant.Fence); !errors.Is(err, lease.ErrNotHolder) {
				t.Fatalf("the holder's renewal after the loss: %v; want ErrNotHolder", err)
			}
			rec, ver, err := s.Load(ctx, "jobs")
			switch {
			case err != nil:
				t.Fatal(err)
			case rec.HolderID != "a" || rec.Fence <= renewed.Fence || rec.Fence < uint64(repairedAt.UnixMicro()):
				t.Fatalf("repaired record %+v: want holder a with a fence above %d and the clock", rec, renewed.Fence)
			case rec.ExpiresAt.Before(repairedAt.Add(ttl)):
				t.Fatalf("repaired record expires at %v; want a full TTL after the repair (%v)", rec.ExpiresAt, repairedAt.Add(ttl))
			case ver <= renewed.Version || uint64(ver) < uint64(repairedAt.UnixNano()):
				t.Fatalf("repaired version %d; want above the lost %d and the clock", ver, renewed.Version)
			}
			if res, err := b.TryAcquire(ctx); err != nil || res.Acquired {
				t.Fatalf("another contender right after the repair: %+v, %v; want refused", res, err)
			}
			if len(reports) != 1 || !strings.Contains(reports[0].Where, path) || !strings.Contains(reports[0].Reason, "repaired") {
				t.Fatalf("reports: %+v; want one naming %s", reports, path)
			}
		})
	}
}

func uitoa(v uint64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestRecordFileIsNotJSON: a format-2 file is not one JSON document, so a reader of format 1
// only — an older version of the store, which unmarshals the whole file — refuses it as corrupt
// and never overwrites it: during an upgrade an older process never takes it for a record.
func TestRecordFileIsNotJSON(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	if _, err := newElection(t, s, "jobs", "a").Init(ctx); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "jobs.lease.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err == nil {
		t.Fatal("a format-2 file parses as one JSON document: a format-1 reader would take it for a record")
	}
}

// TestRecordSurvivesAWriteCutShort: a write cut short after any number of its bytes — what a
// power loss can leave — is never read as a record: a lock-free read gets the last whole record,
// the election goes on (no corrupt error), and a slot left neither old nor new is reported and
// repaired, so the next term's fence is above the one the cut write carried.
func TestRecordSurvivesAWriteCutShort(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	s := openStore(t, src)
	a := newElection(t, s, "jobs", "a")
	won, err := a.TryAcquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Renew(ctx, won.Grant.Fence); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(src, "jobs.lease.json"))
	acked, ackedVer, _ := s.Load(ctx, "jobs")
	// The write that gets cut: a new term of the same holder (fence + 1), made whole in a copy.
	cut := newElection(t, writeStoreFile(t, before), "jobs", "a")
	next, err := cut.TryAcquire(ctx)
	if err != nil || !next.Acquired {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(cut.Store().(*filestore.Store).Dir(), "jobs.lease.json"))
	slot := 0
	if string(before[:4096]) == string(after[:4096]) {
		slot = 1
	}
	start := slot * 4096
	n := filestore.SlotLength(t, after, slot)
	for k := 0; k <= n; k++ {
		torn := append([]byte(nil), before...)
		copy(torn[start:start+k], after[start:start+k])
		ts := writeStoreFile(t, torn)
		var reports []rooms.Damage
		ts.OnDamage(func(d rooms.Damage) { reports = append(reports, d) })
		rec, ver, err := ts.Load(ctx, "jobs")
		switch {
		case err != nil:
			t.Fatalf("cut after %d of %d bytes: load: %v", k, n, err)
		case k == n && (ver != next.Grant.Version || !rec.Equal(next.Grant.Record)):
			t.Fatalf("the whole write: load %+v at %d; want %+v", rec, ver, next.Grant.Record)
		case k < n && (ver != ackedVer || !rec.Equal(acked)):
			t.Fatalf("cut after %d of %d bytes: load %+v at %d; want the last whole record %+v at %d", k, n, rec, ver, acked, ackedVer)
		}
		res, err := newElection(t, ts, "jobs", "a").TryAcquire(ctx)
		if err != nil || !res.Acquired {
			t.Fatalf("cut after %d of %d bytes: the next term: %+v, %v", k, n, res, err)
		}
		if len(reports) > 0 && res.Grant.Fence <= next.Grant.Fence {
			t.Fatalf("cut after %d of %d bytes, reported %s: the next term's fence %d is not above the cut write's %d",
				k, n, reports[0].Reason, res.Grant.Fence, next.Grant.Fence)
		}
		if len(reports) == 0 && k > 0 && k < n && string(torn[start:start+4096]) != string(before[start:start+4096]) {
			t.Fatalf("cut after %d of %d bytes: a slot neither old nor new was not reported", k, n)
		}
	}
}

// writeStoreFile returns a store in a new directory whose election "jobs" has file data.
func writeStoreFile(t *testing.T, data []byte) *filestore.Store {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "jobs.lease.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return openStore(t, dir)
}
