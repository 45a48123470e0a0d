//go:build !race

package rooms_test

import (
	"context"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// TestOperationAllocations: on the memory store, an operation allocates only the copy of its
// shard's document that it changes (one allocation, the document and its room together, for a
// shard of one room or none) and, for a campaign, the token it returns. Ops, their answers, the batch, the pass through the activation gate, the count's
// listing and the index's storage are reused, and the caller's context, fresh and cancellable
// as a request's, is not made to allocate its Done channel when nothing waits. (The race detector allocates on its own: not under -race.)
func TestOperationAllocations(t *testing.T) {
	ctx := context.Background()
	request := func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }
	contexts := testing.AllocsPerRun(200, func() {
		_, cancel := request()
		cancel()
	})
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
		ctx, cancel := request()
		defer cancel()
		if _, err := m.Renew(ctx, room, res.Token, 30*time.Second); err != nil {
			t.Fatal(err)
		}
	}) - contexts
	cycle := testing.AllocsPerRun(200, func() {
		ctx, cancel := request()
		defer cancel()
		if _, err := m.Resign(ctx, room, res.Token); err != nil {
			t.Fatal(err)
		}
		if res, err = m.Campaign(ctx, room, "c", 30*time.Second, ""); err != nil {
			t.Fatal(err)
		}
	}) - contexts
	if renew > 1 || cycle > 1+1+1 {
		t.Errorf("%.1f allocations per renewal (want at most 1), %.1f per resignation and campaign (want at most 3)", renew, cycle)
	}
}
