package rooms_test

import (
	"context"
	"testing"
	"time"

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
	room := func(shard int) string {
		for {
			if id := rooms.NewRoomID(); m.ShardOf(id) == shard {
				return id
			}
		}
	}
	// Both shards exist, so that the campaigns below are updates.
	for _, shard := range []int{0, 1} {
		r := room(shard)
		res, err := m.Campaign(ctx, r, "warm", 5*time.Second, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Resign(ctx, r, res.Token); err != nil {
			t.Fatal(err)
		}
	}
	store.held = 0
	first := make(chan error, 1)
	go func() {
		_, err := m.Campaign(ctx, room(0), "a", 30*time.Second, "")
		first <- err
	}()
	select {
	case <-store.waiting:
	case <-time.After(5 * time.Second):
		t.Fatal("the first activation's write did not start within 5 s")
	}
	second := make(chan error, 1)
	go func() {
		_, err := m.Campaign(ctx, room(1), "b", 30*time.Second, "")
		second <- err
	}()
	select {
	case err := <-second:
		if err != nil {
			t.Fatalf("second activation: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second activation waited for the first one's write to return (the activation lock was still held)")
	}
	close(store.release)
	if err := <-first; err != nil {
		t.Fatalf("first activation: %v", err)
	}
}
