package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// TestWritesDoNotReReadTheirShard: a Store that wrote a shard writes it again after checking
// the slots' headers only, not by reading both slots whole; a write by another Store (another
// process) in between is seen all the same — a stale expected version is a conflict, and the
// next write starts from what the other one wrote.
func TestWritesDoNotReReadTheirShard(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, other := openStore(t, dir), openStore(t, dir)
	key := rooms.ShardKey{Namespace: "cache", Index: 7}
	ver, err := s.CreateShard(ctx, key, []byte(`{"n":0}`))
	if err != nil {
		t.Fatal(err)
	}
	before := filestore.WholeReads(s)
	for n := 1; n <= 50; n++ {
		if ver, err = s.UpdateShard(ctx, key, fmt.Appendf(nil, `{"n":%d}`, n), ver); err != nil {
			t.Fatalf("write %d: %v", n, err)
		}
	}
	if reads := filestore.WholeReads(s) - before; reads != 0 {
		t.Errorf("50 writes after its own creation read the shard whole %d times, want 0", reads)
	}

	otherVer, err := other.UpdateShard(ctx, key, []byte(`{"n":"other"}`), ver)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateShard(ctx, key, []byte(`{"n":"stale"}`), ver); !errors.Is(err, lease.ErrConflict) {
		t.Fatalf("write on the version before the other Store's write: %v, want a conflict", err)
	}
	if ver, err = s.UpdateShard(ctx, key, []byte(`{"n":"after"}`), otherVer); err != nil {
		t.Fatalf("write on the other Store's version: %v", err)
	}
	for _, st := range []*filestore.Store{s, other, openStore(t, dir)} {
		if data, v, err := st.LoadShard(ctx, key); err != nil || string(data) != `{"n":"after"}` || v != ver {
			t.Fatalf("read back: %s at %d (%v), want {\"n\":\"after\"} at %d", data, v, err, ver)
		}
	}
}

// TestWriteOpensTheSlotOnce: a write on a shard this Store last wrote opens two slot files —
// the current slot to check its header, and the other one, whose header it checks and which it
// then writes through the same descriptor — not three.
func TestWriteOpensTheSlotOnce(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, t.TempDir())
	key := rooms.ShardKey{Namespace: "opens", Index: 3}
	ver, err := s.CreateShard(ctx, key, []byte(`{"n":0}`))
	if err != nil {
		t.Fatal(err)
	}
	if ver, err = s.UpdateShard(ctx, key, []byte(`{"n":1}`), ver); err != nil { // fills the cache
		t.Fatal(err)
	}
	before := filestore.SlotOpens(s)
	const writes = 20
	for n := 2; n < 2+writes; n++ {
		if ver, err = s.UpdateShard(ctx, key, fmt.Appendf(nil, `{"n":%d}`, n), ver); err != nil {
			t.Fatalf("write %d: %v", n, err)
		}
	}
	if opens := filestore.SlotOpens(s) - before; opens != 2*writes {
		t.Errorf("%d writes opened slot files %d times, want %d", writes, opens, 2*writes)
	}
	if data, v, err := openStore(t, s.Dir()).LoadShard(ctx, key); err != nil || string(data) != fmt.Sprintf(`{"n":%d}`, 1+writes) || v != ver {
		t.Fatalf("read back by another Store: %s at %d (%v)", data, v, err)
	}
}
