package filestore

import (
	"bytes"
	"hash/crc32"
	"testing"
)

// FlushCount exposes to the tests how many flush system calls s made for its slot writes.
func FlushCount(s *Store) uint64 { return s.commit.flushCount() }

// WholeReads exposes to the tests how many times s read both slots of a rooms shard.
func WholeReads(s *Store) uint64 { return s.slots.wholeReads.Load() }

// HeaderListings exposes to the tests how many shards s's ShardVersions answered from the
// slots' header lines rather than the version table.
func HeaderListings(s *Store) uint64 { return s.slots.headerListings.Load() }

// DirListings exposes to the tests how many times s listed its directory to learn which rooms
// shards exist.
func DirListings(s *Store) uint64 { return s.shardSet.listed.Load() }

// SlotOpens exposes to the tests how many times s opened a rooms slot file for a header check
// or a write.
func SlotOpens(s *Store) uint64 { return s.slots.opens.Load() }

// RewriteSlots returns the two-slot election file file with each slot's content replaced by
// edit(slot index, content) under a header that matches it: content the store wrote whole,
// whatever it says.
func RewriteSlots(t testing.TB, file []byte, edit func(i int, content string) string) []byte {
	t.Helper()
	size := len(file) / 2
	out := make([]byte, len(file))
	for i := range 2 {
		slot := file[i*size : (i+1)*size]
		line, rest, _ := bytes.Cut(slot, []byte{'\n'})
		h, why := parseHeaderOf(line, recordMagic)
		if why != "" {
			t.Fatalf("slot %d: %s", i, why)
		}
		content := []byte(edit(i, string(rest[:h.length])))
		hdr := appendSlotHeader(nil, recordMagic, h.version, len(content), crc32.Checksum(content, castagnoli))
		copy(out[i*size:], append(hdr, content...))
	}
	return out
}

// SlotLength returns how many bytes of slot i of the two-slot election file file its header
// line and content take.
func SlotLength(t testing.TB, file []byte, i int) int {
	t.Helper()
	size := len(file) / 2
	line, _, _ := bytes.Cut(file[i*size:(i+1)*size], []byte{'\n'})
	h, why := parseHeaderOf(line, recordMagic)
	if why != "" {
		t.Fatalf("slot %d: %s", i, why)
	}
	return len(line) + 1 + h.length
}

// OnRecordFlush makes fn run before every flush of an election slot written in place, until
// the test ends.
func OnRecordFlush(t testing.TB, fn func(path string)) {
	t.Helper()
	recordFlushHook = fn
	t.Cleanup(func() { recordFlushHook = nil })
}

// ElectionLocked reports whether another open file description holds the lock of s's election
// namespace.
func ElectionLocked(t testing.TB, s *Store, namespace string) bool {
	t.Helper()
	free, err := s.tryLockedPath(s.lockPath(namespace), func() error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return !free
}

// HoldElectionLock takes the lock of s's election namespace through a file description of its
// own, as another process would, and returns the function that lets it go.
func HoldElectionLock(t testing.TB, s *Store, namespace string) (unlock func()) {
	t.Helper()
	f, err := s.openLock(s.lockPath(namespace))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.lock(); err != nil {
		t.Fatal(err)
	}
	return func() {
		_ = f.unlock()
		_ = f.close()
	}
}
