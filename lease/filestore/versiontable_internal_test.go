package filestore

import (
	"encoding/binary"
	"os"
	"testing"
)

// TestAnnouncedVersionsReadsWholeEntries: the table's whole entries are read, a partial entry
// at its end (a write cut short) and the shards past it announce nothing, and a table read
// into a reused buffer keeps nothing of the previous namespace's.
func TestAnnouncedVersionsReadsWholeEntries(t *testing.T) {
	s := &Store{dir: t.TempDir()}
	table := make([]byte, 2*versionEntry+3)
	binary.LittleEndian.PutUint64(table, 11)
	binary.LittleEndian.PutUint64(table[versionEntry:], 22)
	copy(table[2*versionEntry:], []byte{1, 2, 3})
	if err := os.WriteFile(s.versionTablePath("short"), table, 0o600); err != nil {
		t.Fatal(err)
	}
	var got versionTable
	for i := range got {
		got[i] = 0xff // left from an earlier read
	}
	if err := s.announcedVersions("short", &got); err != nil {
		t.Fatal(err)
	}
	for i, want := range []uint64{11, 22, 0, 0, 0} {
		if v := got.version(i); v != want {
			t.Errorf("shard %d: %d, want %d", i, v, want)
		}
	}
	if err := s.announcedVersions("none", &got); err != nil || got.version(0) != 0 || got.version(1) != 0 {
		t.Errorf("a namespace without a table: %d, %d (%v), want nothing announced", got.version(0), got.version(1), err)
	}
}
