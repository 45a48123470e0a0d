package rooms_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// TestCountFollowsAnotherManager: a Manager's active-room count stays exact while another
// Manager of the same store (another process) activates, resigns, lets rooms expire and removes
// the shards — including a shard whose rooms end at different times, only some of which have
// ended.
func TestCountFollowsAnotherManager(t *testing.T) {
	ctx := context.Background()
	clock := leasetest.NewFakeClock(time.Now())
	store := rooms.NewMemoryStore()
	manager := func() *rooms.Manager {
		m, err := rooms.New(store, "count", rooms.WithShards(4), rooms.WithMaxActiveRooms(3),
			rooms.WithMaxClockSkew(0), rooms.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := manager(), manager()
	campaign := func(m *rooms.Manager, room string, ttl time.Duration) (rooms.Result, error) {
		return m.Campaign(ctx, room, "c", ttl, "")
	}
	mustWin := func(m *rooms.Manager, room string, ttl time.Duration) rooms.Result {
		t.Helper()
		res, err := campaign(m, room, ttl)
		if err != nil || res.Status != rooms.StatusLeader {
			t.Fatalf("campaign in shard %d: %v, %v", m.ShardOf(room), res.Status, err)
		}
		return res
	}
	mustBeRefused := func(m *rooms.Manager, room string, active int) {
		t.Helper()
		var ce *rooms.CapacityError
		if _, err := campaign(m, room, 30*time.Second); !errors.As(err, &ce) || ce.Active != active {
			t.Fatalf("campaign with %d rooms active: %v, want a capacity refusal counting them", active, err)
		}
	}

	mustWin(a, roomInShard(a, 0), 30*time.Second)
	r1 := mustWin(b, roomInShard(b, 1), 30*time.Second)
	mustWin(b, roomInShard(b, 2), 5*time.Second)
	mustBeRefused(a, roomInShard(a, 3), 3)

	if _, err := b.Resign(ctx, r1.RoomID, r1.Token); err != nil {
		t.Fatal(err)
	}
	mustWin(b, roomInShard(b, 2), 30*time.Second) // shard 2 now ends at 5 s and at 30 s
	mustBeRefused(a, roomInShard(a, 3), 3)

	clock.Advance(5 * time.Second) // one room of shard 2 has ended, the other has not
	r3 := mustWin(a, roomInShard(a, 3), 30*time.Second)
	mustBeRefused(a, roomInShard(a, 1), 3)

	if err := store.DeleteShards(ctx, "count"); err != nil {
		t.Fatal(err)
	}
	mustWin(a, roomInShard(a, 1), 30*time.Second)
	mustWin(a, r3.RoomID, 30*time.Second) // a's own shard went too: its room is vacant
	mustWin(a, roomInShard(a, 2), 30*time.Second)
	mustBeRefused(a, roomInShard(a, 0), 3)
}

// TestCountRefusesAnotherShardCount: a shard written by a Manager configured with more shards
// fails the count of a Manager with fewer (closed: the count cannot be trusted), whether its
// index is one the smaller Manager uses or one past its shard count.
func TestCountRefusesAnotherShardCount(t *testing.T) {
	ctx := context.Background()
	for _, shard := range []int{2, 6} {
		store := rooms.NewMemoryStore()
		wide, err := rooms.New(store, "wide", rooms.WithShards(8))
		if err != nil {
			t.Fatal(err)
		}
		narrow, err := rooms.New(store, "wide", rooms.WithShards(4))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := wide.Campaign(ctx, roomInShard(wide, shard), "c", 30*time.Second, ""); err != nil {
			t.Fatal(err)
		}
		room := roomInShard(narrow, 0)
		var corrupt *lease.CorruptError
		if _, err := narrow.Campaign(ctx, room, "c", 30*time.Second, ""); !errors.As(err, &corrupt) {
			t.Errorf("shard %d of 8 stored: campaign with 4 shards: %v, want the shard reported corrupt", shard, err)
		}
	}
}

// TestMaxActiveRoomsInForce: a Manager reports the limit it enforces — the one given, 0 (no
// limit) included, else the default of a store that keeps shard documents.
func TestMaxActiveRoomsInForce(t *testing.T) {
	for _, tc := range []struct {
		opts []rooms.Option
		want int
	}{
		{nil, rooms.DefaultMaxActiveRooms},
		{[]rooms.Option{rooms.WithMaxActiveRooms(0)}, 0},
		{[]rooms.Option{rooms.WithMaxActiveRooms(7)}, 7},
	} {
		m, err := rooms.New(rooms.NewMemoryStore(), "limit", tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.MaxActiveRooms(); got != tc.want {
			t.Errorf("MaxActiveRooms() = %d, want %d", got, tc.want)
		}
	}
}
