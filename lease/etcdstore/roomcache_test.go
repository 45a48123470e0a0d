package etcdstore_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/etcdstore"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore/etcdtest"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/rooms/roomstest"
)

// countRequests counts s's requests to etcd from now on.
func countRequests(s *etcdstore.Store) *atomic.Int64 {
	var n atomic.Int64
	s.OnRequest(func(string, time.Duration, error) { n.Add(1) })
	return &n
}

// twoServers are the Managers of two servers of namespace "ns" on one embedded etcd, each with
// a store (connection) of its own, on one fake clock; the first one's store too.
func twoServers(t *testing.T) (m1, m2 *rooms.Manager, s1 *etcdstore.Store, clock *leasetest.FakeClock) {
	t.Helper()
	newS := sharedStore(t, etcdtest.Embedded(t))
	clock = leasetest.NewFakeClock(time.Now())
	s1 = newS(t)
	var err error
	if m1, err = rooms.New(s1, "ns", rooms.WithClock(clock)); err != nil {
		t.Fatal(err)
	}
	if m2, err = rooms.New(newS(t), "ns", rooms.WithClock(clock)); err != nil {
		t.Fatal(err)
	}
	return m1, m2, s1, clock
}

// TestRenewalOfARememberedRoomIsOneWrite: a Manager decides a renewal and a resignation of the
// room it wrote last on what it remembers — one conditional write each, no read first.
func TestRenewalOfARememberedRoomIsOneWrite(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, etcdtest.Embedded(t))
	clock := leasetest.NewFakeClock(time.Now())
	m, err := rooms.New(s, "ns", rooms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	room := rooms.NewRoomID()
	won, err := m.Campaign(ctx, room, "a", 10*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	n := countRequests(s)
	clock.Advance(time.Second)
	renewed, err := m.Renew(ctx, room, won.Token, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 1 {
		t.Fatalf("a renewal of a remembered room made %d requests, want 1 (the write)", got)
	}
	if !renewed.Leader.ExpiresAt.After(won.Leader.ExpiresAt) {
		t.Fatalf("renewal's expiry %v, not after the campaign's %v", renewed.Leader.ExpiresAt, won.Leader.ExpiresAt)
	}
	n.Store(0)
	if _, err := m.Resign(ctx, room, won.Token); err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 1 {
		t.Fatalf("a resignation of a remembered room made %d requests, want 1 (the write)", got)
	}
	// Vacant by the store, as another server reads it.
	other, err := rooms.New(newStore(t, s.Options().Endpoints...), "ns", rooms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := other.Status(ctx, room); err != nil || st.Leader != nil {
		t.Fatalf("status after the resignation = %+v, %v; want vacant", st, err)
	}
}

// TestRememberedRoomChangedElsewhere: another server renews the room meanwhile; the renewal
// decided on the stale memory fails its condition, is decided again on a read, and lands — and
// a refusal on memory (a token that is no longer current) is never answered without a read.
func TestRememberedRoomChangedElsewhere(t *testing.T) {
	ctx := context.Background()
	m1, m2, _, clock := twoServers(t)
	room := rooms.NewRoomID()
	won, err := m1.Campaign(ctx, room, "a", 10*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if _, err := m2.Renew(ctx, room, won.Token, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	again, err := m1.Renew(ctx, room, won.Token, 10*time.Second)
	if err != nil {
		t.Fatalf("renewal through the server whose memory of the room is stale: %v", err)
	}
	if want := clock.Now().Add(10 * time.Second); again.Leader.Term != won.Leader.Term || again.Leader.ExpiresAt.Sub(want).Abs() > time.Millisecond {
		t.Fatalf("renewal = term %d until %v; want term %d until %v (this renewal's ttl)", again.Leader.Term, again.Leader.ExpiresAt, won.Leader.Term, want)
	}
	// m2 resigns; m1 still remembers the room as held by a, but a resignation or renewal of
	// a's term must be refused on what the store holds.
	if _, err := m2.Resign(ctx, room, won.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := m1.Renew(ctx, room, won.Token, 10*time.Second); !errors.Is(err, rooms.ErrVacant) {
		t.Fatalf("renewal of a resigned term through the server that remembers it held: %v, want ErrVacant", err)
	}
	st, err := m1.Status(ctx, room)
	if err != nil {
		t.Fatal(err)
	}
	if st.Leader != nil {
		t.Fatalf("status after the resignation elsewhere: leader %+v, want none", st.Leader)
	}
}

// TestRememberedHeadChangedElsewhere: another server activates another room of the shard (its
// head, with the floor, moves); a resignation and a campaign decided on the stale head fail
// their condition on it, are decided again on a read, and land — with a term above the other
// server's.
func TestRememberedHeadChangedElsewhere(t *testing.T) {
	ctx := context.Background()
	m1, m2, _, _ := twoServers(t)
	a := rooms.NewRoomID()
	b := roomstest.RoomInShard(m1, m1.ShardOf(a))
	won, err := m1.Campaign(ctx, a, "a", 10*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	other, err := m2.Campaign(ctx, b, "b", 10*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m1.Resign(ctx, a, won.Token); err != nil {
		t.Fatalf("resignation decided on a head another server moved since: %v", err)
	}
	again, err := m1.Campaign(ctx, a, "c", 10*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != rooms.StatusLeader || again.Leader.Term <= other.Leader.Term {
		t.Fatalf("campaign after the other server's activation: %s with term %d; want leader above the shard's floor %d",
			again.Status, again.Leader.Term, other.Leader.Term)
	}
}

// countingStore is the etcd store, counting its CountRooms calls.
type countingStore struct {
	*etcdstore.Store
	counts atomic.Int64
}

func (c *countingStore) CountRooms(ctx context.Context, namespace string, shards int, after int64) (int, int64, error) {
	c.counts.Add(1)
	return c.Store.CountRooms(ctx, namespace, shards, after)
}

// TestFarFromTheLimitCountsAreRare: counting the live rooms is linear in them, so far from the
// limit a count serves for as long as other processes would need to close the distance (at most
// 30 s), and near the limit for the count max age (1 s) only.
func TestFarFromTheLimitCountsAreRare(t *testing.T) {
	ctx := context.Background()
	newS := sharedStore(t, etcdtest.Embedded(t))
	for _, tc := range []struct {
		name      string
		limit     int
		after2s   int64 // counts after a second activation 2 s later
		after32s  int64 // and after a third 30 s after that
		namespace string
	}{
		{"far", rooms.DefaultMaxActiveRoomsIndividual, 1, 2, "far"},
		{"near", 10, 2, 3, "near"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &countingStore{Store: newS(t)}
			clock := leasetest.NewFakeClock(time.Now())
			m, err := rooms.New(s, tc.namespace, rooms.WithClock(clock), rooms.WithMaxActiveRooms(tc.limit))
			if err != nil {
				t.Fatal(err)
			}
			campaign := func() {
				t.Helper()
				if r, err := m.Campaign(ctx, rooms.NewRoomID(), "a", 60*time.Second, ""); err != nil || r.Status != rooms.StatusLeader {
					t.Fatalf("campaign: %+v, %v", r, err)
				}
			}
			campaign()
			if got := s.counts.Load(); got != 1 {
				t.Fatalf("counts after the first activation: %d, want 1", got)
			}
			clock.Advance(2 * time.Second)
			campaign()
			if got := s.counts.Load(); got != tc.after2s {
				t.Fatalf("counts after an activation 2 s later: %d, want %d", got, tc.after2s)
			}
			clock.Advance(30 * time.Second)
			campaign()
			if got := s.counts.Load(); got != tc.after32s {
				t.Fatalf("counts after an activation 30 s after that: %d, want %d", got, tc.after32s)
			}
		})
	}
}

// TestCampaignInANewRoomIsOneWrite: once a server knows a shard's head, a campaign in a room it
// has never seen is decided as in a room not stored — one conditional write, no read — and when
// the room does exist (another server's), the condition fails and the campaign is decided again
// on a read: a follower of the other server's leader.
func TestCampaignInANewRoomIsOneWrite(t *testing.T) {
	ctx := context.Background()
	m1, m2, s1, _ := twoServers(t)
	a := rooms.NewRoomID()
	if _, err := m1.Campaign(ctx, a, "a", 10*time.Second, ""); err != nil {
		t.Fatal(err)
	}
	n := countRequests(s1)
	fresh := roomstest.RoomInShard(m1, m1.ShardOf(a))
	won, err := m1.Campaign(ctx, fresh, "f", 10*time.Second, "")
	if err != nil || won.Status != rooms.StatusLeader {
		t.Fatalf("campaign in a new room: %+v, %v", won, err)
	}
	if got := n.Load(); got != 1 {
		t.Fatalf("a campaign in a new room of a known shard made %d requests, want 1 (the write)", got)
	}
	var other string
	for other == "" || other == fresh {
		other = roomstest.RoomInShard(m1, m1.ShardOf(a))
	}
	held, err := m2.Campaign(ctx, other, "b", 10*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := m1.Campaign(ctx, other, "c", 10*time.Second, "")
	if err != nil || got.Status != rooms.StatusFollower || got.Leader.CandidateID != "b" || got.Leader.Term != held.Leader.Term {
		t.Fatalf("campaign in a room another server holds, unknown to this one: %+v, %v; want a follower of b's term %d", got, err, held.Leader.Term)
	}
}

// TestGuessedRoomThatExistsIsReadOnce: the only condition that can refuse the guess is the
// room's own — another server created the room, and this one then moved the shard's head
// itself — and the campaign is a follower's, decided on a read.
func TestGuessedRoomThatExistsIsReadOnce(t *testing.T) {
	ctx := context.Background()
	m1, m2, _, _ := twoServers(t)
	other := rooms.NewRoomID()
	held, err := m2.Campaign(ctx, other, "b", 10*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	// m1 learns the head as it is after m2's activation, and moves it with its own.
	if _, err := m1.Campaign(ctx, roomstest.RoomInShard(m1, m1.ShardOf(other)), "a", 10*time.Second, ""); err != nil {
		t.Fatal(err)
	}
	got, err := m1.Campaign(ctx, other, "c", 10*time.Second, "")
	if err != nil || got.Status != rooms.StatusFollower || got.Leader.CandidateID != "b" || got.Leader.Term != held.Leader.Term {
		t.Fatalf("campaign in a room another server created, guessed not stored: %+v, %v; want a follower of b's term %d", got, err, held.Leader.Term)
	}
}
