package filestore_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// TestHeaderChecksLeaveAccessTimes: a write's check of the current slot's header line leaves
// the slot's access time alone (O_NOATIME). On a relatime mount, the default, reading a slot
// written since it was last read updated it: an inode made dirty, and written back by the next
// flush, on every write.
func TestHeaderChecksLeaveAccessTimes(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openStore(t, dir)
	key := rooms.ShardKey{Namespace: "atime", Index: 0}
	ver, err := s.CreateShard(ctx, key, []byte(`{"n":0}`))
	if err != nil {
		t.Fatal(err)
	}
	if ver, err = s.UpdateShard(ctx, key, []byte(`{"n":1}`), ver); err != nil { // into slot b
		t.Fatal(err)
	}
	slotB := filepath.Join(dir, "atime.rooms-00.b")
	// Read last before it was written: what a relatime mount updates on the next read.
	old := time.Unix(1_000_000_000, 0)
	if err := os.Chtimes(slotB, old, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err = s.UpdateShard(ctx, key, []byte(`{"n":2}`), ver); err != nil { // checks b, writes a
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(slotB, &st); err != nil {
		t.Fatal(err)
	}
	if got := time.Unix(st.Atim.Unix()); !got.Equal(old) {
		t.Errorf("the current slot's access time after a write checked its header: %v, want %v (unchanged)", got, old)
	}
}
