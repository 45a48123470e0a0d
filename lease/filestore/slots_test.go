package filestore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// TestShardSlotsSurviveTornWrites: a write cut short leaves the other slot's version, which the
// store keeps serving and the next write replaces the torn slot with; a shard without any whole
// slot is reported as damaged and never written over.
func TestShardSlotsSurviveTornWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	key := rooms.ShardKey{Namespace: "torn", Index: 3}
	slot := func(name string) string { return filepath.Join(dir, "torn.rooms-03."+name) }
	v1, err := s.CreateShard(ctx, key, []byte(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	v2, err := s.UpdateShard(ctx, key, []byte(`{"n":2}`), v1)
	if err != nil {
		t.Fatal(err)
	}
	// v1 is in slot a, v2 in slot b. A crash while writing v3 into slot a: half of it landed.
	whole, err := os.ReadFile(slot("b"))
	if err != nil {
		t.Fatal(err)
	}
	torn := bytes.Replace(whole, []byte(`"n":2`), []byte(`"n":3`), 1)[:len(whole)/2]
	if err := os.WriteFile(slot("a"), torn, 0o600); err != nil {
		t.Fatal(err)
	}
	data, ver, err := s.LoadShard(ctx, key)
	if err != nil || ver != v2 || string(data) != `{"n":2}` {
		t.Fatalf("after a torn write: %s %d %v, want v2 (%d)", data, ver, err, v2)
	}
	if _, err := s.UpdateShard(ctx, key, []byte(`{"n":3}`), v1); !errors.Is(err, lease.ErrConflict) {
		t.Fatalf("update on the torn version: %v, want a conflict", err)
	}
	v3, err := s.UpdateShard(ctx, key, []byte(`{"n":3}`), v2)
	if err != nil {
		t.Fatal(err)
	}
	if data, ver, err := s.LoadShard(ctx, key); err != nil || ver != v3 || string(data) != `{"n":3}` {
		t.Fatalf("after writing over the torn slot: %s %d %v", data, ver, err)
	}
	// A longer and then a shorter document: bytes left over from the longer one are ignored.
	v4, err := s.UpdateShard(ctx, key, []byte(`{"pad":"`+string(bytes.Repeat([]byte("x"), 5000))+`"}`), v3)
	if err != nil {
		t.Fatal(err)
	}
	v5, err := s.UpdateShard(ctx, key, []byte(`{"n":5}`), v4)
	if err != nil {
		t.Fatal(err)
	}
	v6, err := s.UpdateShard(ctx, key, []byte(`{"n":6}`), v5)
	if err != nil {
		t.Fatal(err)
	}
	if data, ver, err := s.LoadShard(ctx, key); err != nil || ver != v6 || string(data) != `{"n":6}` {
		t.Fatalf("after a shorter document: %s %d %v", data, ver, err)
	}

	// Both slots damaged: reported with both files named, and nothing is written.
	for _, name := range []string{"a", "b"} {
		if err := os.WriteFile(slot(name), []byte("lfp-swarm-lease-rooms-slot 1 9 3 00000000\nabc"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var corrupt *lease.CorruptError
	if _, _, err := s.LoadShard(ctx, key); !errors.As(err, &corrupt) {
		t.Fatalf("load of a damaged shard: %v, want a CorruptError", err)
	}
	if _, err := s.UpdateShard(ctx, key, []byte(`{}`), v6); !errors.As(err, &corrupt) {
		t.Fatalf("update of a damaged shard: %v, want a CorruptError", err)
	}
	if _, err := s.CreateShard(ctx, key, []byte(`{}`)); !errors.As(err, &corrupt) {
		t.Fatalf("create over a damaged shard: %v, want a CorruptError", err)
	}
	for _, name := range []string{"a", "b"} {
		if got, _ := os.ReadFile(slot(name)); !bytes.HasSuffix(got, []byte("\nabc")) {
			t.Fatalf("slot %s was written over: %q", name, got)
		}
	}
	// The operator's way out: delete the namespace's shards.
	if err := s.DeleteShards(ctx, "torn"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.LoadShard(ctx, key); !errors.Is(err, lease.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}
