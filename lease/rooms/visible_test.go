package rooms_test

import (
	"context"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// visibleStore is a memory store whose writes of shard held report themselves visible and then
// wait for release, like a file store slot written and waiting for its flush.
type visibleStore struct {
	*rooms.MemoryStore
	held    int
	waiting chan struct{}
	release chan struct{}
}

func (s *visibleStore) UpdateShard(ctx context.Context, key rooms.ShardKey, data []byte, expected lease.Version) (lease.Version, error) {
	v, err := s.MemoryStore.UpdateShard(ctx, key, data, expected)
	if key.Index == s.held {
		rooms.WrittenVisible(ctx)
		s.waiting <- struct{}{}
		<-s.release
	}
	return v, err
}

// TestActivationLockEndsWhenTheWriteIsVisible: an activation whose write the store reports
// visible lets the next activation (another shard) count and write while the first one's write
// has not returned yet — the activation lock is not held until the write is durable.
func TestActivationLockEndsWhenTheWriteIsVisible(t *testing.T) {
	ctx := context.Background()
	store := &visibleStore{MemoryStore: rooms.NewMemoryStore(), held: -1, waiting: make(chan struct{}, 1), release: make(chan struct{})}
	m, err := rooms.New(store, "visible", rooms.WithShards(4), rooms.WithMaxActiveRooms(10), rooms.WithMaxClockSkew(0))
	if err != nil {
		t.Fatal(err)
	}
	writeShards(t, m, 0, 1)
	store.held = 0
	first := campaignInBackground(ctx, m, roomInShard(m, 0), "a")
	awaitSignal(t, store.waiting, "the first activation's write did not start")
	second := campaignInBackground(ctx, m, roomInShard(m, 1), "b")
	if err := awaitSignal(t, second, "the second activation did not end (the activation lock was still held)"); err != nil {
		t.Fatalf("second activation: %v", err)
	}
	close(store.release)
	if err := <-first; err != nil {
		t.Fatalf("first activation: %v", err)
	}
}
