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
	room := func(shard int) string {
		for {
			if id := rooms.NewRoomID(); m.ShardOf(id) == shard {
				return id
			}
		}
	}
	// Shards 0 and 1 exist, so that the campaigns below are updates.
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
		close(store.release)
		t.Fatal("the second activation waited for the first one's write to return")
	}
	// Shard 2 is new (a creation, not held): the first room, still being written, counts.
	if _, err := m.Campaign(ctx, room(2), "c", 30*time.Second, ""); !errors.Is(err, rooms.ErrCapacity) {
		close(store.release)
		t.Fatalf("third activation with two rooms active, one of them still being written: %v, want a capacity refusal", err)
	}
	close(store.release)
	if err := <-first; err != nil {
		t.Fatalf("first activation: %v", err)
	}
}
