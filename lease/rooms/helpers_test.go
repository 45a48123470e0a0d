package rooms_test

import (
	"context"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/rooms/roomstest"
)

// heldStore is a memory store whose writes of shard held wait for release before they return,
// like a file store slot waiting for its flush. With visible, a held write is applied and
// reports itself visible (rooms.WrittenVisible) before it waits; without, it waits before it
// applies, never reported visible: a slow write, still in flight.
type heldStore struct {
	*rooms.MemoryStore
	visible bool
	held    int
	waiting chan struct{}
	release chan struct{}
}

func newHeldStore(visible bool) *heldStore {
	return &heldStore{MemoryStore: rooms.NewMemoryStore(), visible: visible, held: -1,
		waiting: make(chan struct{}, 1), release: make(chan struct{})}
}

func (s *heldStore) UpdateShard(ctx context.Context, key rooms.ShardKey, data []byte, expected lease.Version) (lease.Version, error) {
	if key.Index != s.held {
		return s.MemoryStore.UpdateShard(ctx, key, data, expected)
	}
	if !s.visible {
		s.waiting <- struct{}{}
		<-s.release
		return s.MemoryStore.UpdateShard(ctx, key, data, expected)
	}
	v, err := s.MemoryStore.UpdateShard(ctx, key, data, expected)
	rooms.WrittenVisible(ctx)
	s.waiting <- struct{}{}
	<-s.release
	return v, err
}

// holdFirstActivation makes a Manager of four shards on store with the active-room limit
// maxActive, writes shards 0 and 1 (so that campaigns there are updates), and starts a campaign
// in shard 0 whose write store holds; it returns once that write has reached the store, with
// the campaign's outcome to come.
func holdFirstActivation(t *testing.T, store *heldStore, maxActive int) (*rooms.Manager, <-chan error) {
	t.Helper()
	m, err := rooms.New(store, "held", rooms.WithShards(4), rooms.WithMaxActiveRooms(maxActive), rooms.WithMaxClockSkew(0))
	if err != nil {
		t.Fatal(err)
	}
	roomstest.WriteShards(t, m, 0, 1)
	store.held = 0
	first := campaignInBackground(context.Background(), m, roomInShard(m, 0), "a")
	awaitSignal(t, store.waiting, "the first activation's write did not start")
	return m, first
}

// roomInShard is roomstest.RoomInShard.
var roomInShard = roomstest.RoomInShard

// campaignInBackground campaigns for room in a goroutine; the channel gets the outcome.
func campaignInBackground(ctx context.Context, m *rooms.Manager, room, candidate string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := m.Campaign(ctx, room, candidate, 30*time.Second, "")
		done <- err
	}()
	return done
}

// awaitSignal waits up to 5 s for a value on ch, else fails the test with what did not happen.
func awaitSignal[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("%s within 5 s", what)
		panic("unreachable")
	}
}
