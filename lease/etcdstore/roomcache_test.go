package etcdstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/etcdstore"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore/etcdtest"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// countRequests counts s's requests to etcd from now on.
func countRequests(s *etcdstore.Store) *atomic.Int64 {
	var n atomic.Int64
	s.OnRequest(func(string, time.Duration, error) { n.Add(1) })
	return &n
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
	endpoint := etcdtest.Embedded(t)
	newS := sharedStore(t, endpoint)
	clock := leasetest.NewFakeClock(time.Now())
	m1, err := rooms.New(newS(t), "ns", rooms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	m2, err := rooms.New(newS(t), "ns", rooms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
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
	if _, err := m1.Renew(ctx, room, won.Token, 10*time.Second); err == nil {
		t.Fatal("renewal of a resigned term through the server that remembers it held: accepted")
	}
	st, err := m1.Status(ctx, room)
	if err != nil {
		t.Fatal(err)
	}
	if st.Leader != nil {
		t.Fatalf("status after the resignation elsewhere: leader %+v, want none", st.Leader)
	}
}
