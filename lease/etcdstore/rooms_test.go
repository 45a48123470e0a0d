package etcdstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"

	"github.com/regbo/lfp-swarm-lease/lease/etcdstore/etcdtest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/rooms/roomstest"
)

// TestRoomsSuite runs the rooms suite: Managers on the store itself take the room path
// (rooms.RoomStore); the suite's wrapped stores hide it and take the shard-document path over
// the same keys, so both paths, and both together, are checked.
func TestRoomsSuite(t *testing.T) {
	newS := sharedStore(t, etcdtest.Embedded(t))
	roomstest.RunSuite(t, func(t *testing.T) rooms.Store { return newS(t) })
}

// TestRoomsLayout: on etcd a campaign writes its room, its index entry and the shard's head; a
// renewal writes its room alone — no other room of the shard is rewritten — and the count of
// active rooms comes from the index, without expired rooms.
func TestRoomsLayout(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, etcdtest.Embedded(t))
	clock := leasetest.NewFakeClock(time.Now())
	m, err := rooms.New(s, "ns", rooms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	// No shard document grows with the rooms: the default limit is the one for such stores.
	if got := m.MaxActiveRooms(); got != rooms.DefaultMaxActiveRoomsIndividual {
		t.Fatalf("MaxActiveRooms() = %d, want %d on etcd", got, rooms.DefaultMaxActiveRoomsIndividual)
	}
	a := rooms.NewRoomID()
	b := roomstest.RoomInShard(m, m.ShardOf(a))
	ra, err := m.Campaign(ctx, a, "a", 10*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Campaign(ctx, b, "b", 10*time.Second, ""); err != nil {
		t.Fatal(err)
	}
	keys := func() map[string]int64 {
		resp, err := s.Client().Get(ctx, s.Options().Prefix+"/rooms/ns/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, kv := range resp.Kvs {
			out[strings.TrimPrefix(string(kv.Key), s.Options().Prefix+"/rooms/ns/")] = kv.ModRevision
		}
		return out
	}
	before := keys()
	shard := fmt.Sprintf("s/%03d", m.ShardOf(a))
	if len(before) != 5 || before[shard] == 0 || before[shard+"/"+a] == 0 || before[shard+"/"+b] == 0 {
		t.Fatalf("keys after two campaigns: %v; want the head, two rooms and two index entries", before)
	}
	clock.Advance(time.Second)
	if _, err := m.Renew(ctx, a, ra.Token, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	after := keys()
	for k, rev := range before {
		moved := after[k] != rev
		if wantMoved := k == shard+"/"+a; moved != wantMoved && !strings.HasPrefix(k, "x/") {
			t.Errorf("key %s: revision %d → %d after a renewal of %s", k, rev, after[k], a)
		}
	}
	if n, first, err := s.CountRooms(ctx, "ns", m.Shards(), clock.Now().UnixMilli()); err != nil || n != 2 || first == 0 {
		t.Fatalf("count = %d (first %d), %v; want 2", n, first, err)
	}
	// Past b's expiry (not a's, renewed a second later): one room counts.
	if n, _, err := s.CountRooms(ctx, "ns", m.Shards(), clock.Now().Add(9*time.Second+500*time.Millisecond).UnixMilli()); err != nil || n != 1 {
		t.Fatalf("count after b's expiry = %d, %v; want 1", n, err)
	}
}
