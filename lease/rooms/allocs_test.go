//go:build !race

package rooms_test

import (
	"context"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// TestOperationAllocations: on the memory store, an operation allocates only the copy of its
// shard's document that it changes (the document and its map, 3 allocations for a small
// shard) and, for a campaign, the token it returns. Ops, their answers, the batch, the pass
// through the activation gate, the count's listing and the index's storage are reused. (The
// race detector allocates on its own: not under -race.)
func TestOperationAllocations(t *testing.T) {
	ctx := context.Background()
	m, err := rooms.New(rooms.NewMemoryStore(), "allocs")
	if err != nil {
		t.Fatal(err)
	}
	room := rooms.NewRoomID()
	res, err := m.Campaign(ctx, room, "c", 30*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	renew := testing.AllocsPerRun(200, func() {
		if _, err := m.Renew(ctx, room, res.Token, 30*time.Second); err != nil {
			t.Fatal(err)
		}
	})
	cycle := testing.AllocsPerRun(200, func() {
		if _, err := m.Resign(ctx, room, res.Token); err != nil {
			t.Fatal(err)
		}
		if res, err = m.Campaign(ctx, room, "c", 30*time.Second, ""); err != nil {
			t.Fatal(err)
		}
	})
	if renew > 3 || cycle > 3+3+1 {
		t.Errorf("%.1f allocations per renewal (want at most 3), %.1f per resignation and campaign (want at most 7)", renew, cycle)
	}
}
