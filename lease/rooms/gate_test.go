package rooms_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// stalledStore is a memory store whose writes of shard held wait for release before they
// apply, never reporting themselves visible: a slow write, still in flight.
type stalledStore struct {
	*rooms.MemoryStore
	held    int
	waiting chan struct{}
	release chan struct{}
}

func (s *stalledStore) UpdateShard(ctx context.Context, key rooms.ShardKey, data []byte, expected lease.Version) (lease.Version, error) {
	if key.Index == s.held {
		s.waiting <- struct{}{}
		<-s.release
	}
	return s.MemoryStore.UpdateShard(ctx, key, data, expected)
}

// TestActivationsDoNotWaitForOtherShardsWrites: an activation whose write is in flight does not
// hold up an activation of another shard of the same Manager (the count and the decision are
// serialised, the writes are not), and the in-flight one is counted: with room for two, a
// third campaign is refused while the first write has not returned.
func TestActivationsDoNotWaitForOtherShardsWrites(t *testing.T) {
	ctx := context.Background()
	store := &stalledStore{MemoryStore: rooms.NewMemoryStore(), held: -1, waiting: make(chan struct{}, 1), release: make(chan struct{})}
	m, err := rooms.New(store, "gate", rooms.WithShards(4), rooms.WithMaxActiveRooms(2), rooms.WithMaxClockSkew(0))
	if err != nil {
		t.Fatal(err)
	}
	writeShards(t, m, 0, 1)
	store.held = 0
	first := campaignInBackground(ctx, m, roomInShard(m, 0), "a")
	awaitSignal(t, store.waiting, "the first activation's write did not start")
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
