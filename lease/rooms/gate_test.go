package rooms_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// TestActivationsDoNotWaitForOtherShardsWrites: an activation whose write is in flight (not
// even visible yet) does not hold up an activation of another shard of the same Manager (the
// count and the decision are serialised, the writes are not), and the in-flight one is
// counted: with room for two, a third campaign is refused while the first write has not
// returned.
func TestActivationsDoNotWaitForOtherShardsWrites(t *testing.T) {
	ctx := context.Background()
	store := newHeldStore(false)
	m, first := holdFirstActivation(t, store, 2)
	defer func() {
		close(store.release)
		if err := <-first; err != nil {
			t.Errorf("first activation: %v", err)
		}
	}()
	second := campaignInBackground(ctx, m, roomInShard(m, 1), "b")
	if err := awaitSignal(t, second, "the second activation did not end while the first one's write was in flight"); err != nil {
		t.Fatalf("second activation: %v", err)
	}
	// Shard 2 is new (a creation, not held): the first room, still being written, counts.
	if _, err := m.Campaign(ctx, roomInShard(m, 2), "c", 30*time.Second, ""); !errors.Is(err, rooms.ErrCapacity) {
		t.Fatalf("third activation with two rooms active, one of them still being written: %v, want a capacity refusal", err)
	}
}
