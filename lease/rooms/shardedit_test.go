package rooms

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestCollectDropsExactlyTheEndedRooms: however the rooms were put (new, renewed longer or
// shorter, removed) and whenever collect runs, it leaves exactly the rooms that are live by
// the Manager's rule, whether it walks them or trusts its bound.
func TestCollectDropsExactlyTheEndedRooms(t *testing.T) {
	for _, skew := range []time.Duration{0, 1500 * time.Microsecond} {
		m, err := New(NewMemoryStore(), "collect", WithShards(1), WithMaxClockSkew(skew))
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, uint64(skew)))
		start := time.UnixMilli(1_764_000_000_000)
		now := start
		doc := newShard(ShardKey{Namespace: "collect", Index: 0}, 1, now)
		ids := make([]string, 12)
		for i := range ids {
			ids[i] = fmt.Sprintf("room-%04d", i)
		}
		for step := range 400 {
			want := map[string]bool{}
			for id, e := range doc.Rooms.all() {
				if m.live(e, now) {
					want[id] = true
				}
			}
			m.collect(doc, now)
			if doc.Rooms.len() != len(want) {
				t.Fatalf("skew %v, step %d: %d rooms after collect, want %d", skew, step, doc.Rooms.len(), len(want))
			}
			for id := range doc.Rooms.all() {
				if !want[id] {
					t.Fatalf("skew %v, step %d: room %s ended but was kept", skew, step, id)
				}
			}
			doc = doc.clone() // as a batch does: the next attempt changes a copy
			for range rng.IntN(3) {
				id := ids[rng.IntN(len(ids))]
				if rng.IntN(4) == 0 {
					doc.remove(id)
					continue
				}
				ttl := time.Duration(rng.IntN(40)+1) * 100 * time.Millisecond
				putRoom(doc, id, roomEntry{Candidate: "c", Term: 1, ExpiresMs: now.Add(ttl).UnixMilli(), TTLSec: 5})
			}
			now = now.Add(time.Duration(rng.IntN(400)) * time.Millisecond)
		}
	}
}
