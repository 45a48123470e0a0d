package roomstest

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// NewStore returns a handle on the store under test. Every call during one suite run must reach
// the same stored state — the same *rooms.MemoryStore, a new file store on the same directory, a
// new Docker client on the same Swarm — so that several handles act like several processes.
// Every subtest uses its own namespace and removes its shards at the end.
type NewStore func(t *testing.T) rooms.Store

// TTL is the lease duration of the suite's campaigns; the fake clock makes it cost nothing.
const TTL = 10 * time.Second

// env is one subtest's namespace, fake clock and store.
type env struct {
	t     *testing.T
	ns    string
	clock *leasetest.FakeClock
	store rooms.Store
	new   NewStore
	// shards is the shard count of every Manager of the env: the store's default, also for
	// Managers on a wrapper that hides what the store is (a RoomStore's default differs).
	shards int
}

func newEnv(t *testing.T, newStore NewStore) *env {
	t.Helper()
	e := &env{t: t, ns: leasetest.Namespace(t), clock: leasetest.NewFakeClock(time.Now()), store: newStore(t), new: newStore}
	probe, err := rooms.New(e.store, e.ns)
	if err != nil {
		t.Fatal(err)
	}
	e.shards = probe.Shards()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.store.DeleteShards(ctx, e.ns); err != nil {
			t.Errorf("remove the shards of %q: %v", e.ns, err)
		}
	})
	return e
}

// newRoomEnv is the start of most scenarios: an env, a Manager on its store, and a new room id.
func newRoomEnv(t *testing.T, newStore NewStore) (*env, *rooms.Manager, string) {
	t.Helper()
	e := newEnv(t, newStore)
	return e, e.manager(nil), rooms.NewRoomID()
}

// manager returns a Manager of the subtest's namespace on store (the env's own when nil).
func (e *env) manager(store rooms.Store, opts ...rooms.Option) *rooms.Manager {
	e.t.Helper()
	store = cmp.Or(store, e.store)
	m, err := rooms.New(store, e.ns, append([]rooms.Option{rooms.WithClock(e.clock), rooms.WithShards(e.shards)}, opts...)...)
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

func mustLead(t *testing.T, m *rooms.Manager, room, candidate string) rooms.Result {
	t.Helper()
	res, err := m.Campaign(context.Background(), room, candidate, TTL, "")
	if err != nil {
		t.Fatalf("%s campaign in %s: %v", candidate, room, err)
	}
	if res.Status != rooms.StatusLeader || res.Token == "" || res.Leader.CandidateID != candidate {
		t.Fatalf("%s campaign in %s: %+v, want leader with a token", candidate, room, res)
	}
	return res
}

func mustFollow(t *testing.T, m *rooms.Manager, room, candidate, leader string) rooms.Result {
	t.Helper()
	res, err := m.Campaign(context.Background(), room, candidate, TTL, "")
	if err != nil {
		t.Fatalf("%s campaign in %s: %v", candidate, room, err)
	}
	if res.Status != rooms.StatusFollower || res.Token != "" || res.Leader.CandidateID != leader || res.RetryAfter <= 0 {
		t.Fatalf("%s campaign in %s: %+v, want follower of %s with a retry_after and no token", candidate, room, res, leader)
	}
	return res
}

func mustStatus(t *testing.T, m *rooms.Manager, room string) rooms.RoomState {
	t.Helper()
	st, err := m.Status(context.Background(), room)
	if err != nil {
		t.Fatalf("status of %s: %v", room, err)
	}
	return st
}

// RoomInShard returns a fresh room id that hashes to shard.
func RoomInShard(m *rooms.Manager, shard int) string {
	for {
		if id := rooms.NewRoomID(); m.ShardOf(id) == shard {
			return id
		}
	}
}

// WriteShards writes each of shards once and leaves it without a live room, so that later
// campaigns there are updates of an existing shard, not creations.
func WriteShards(t *testing.T, m *rooms.Manager, shards ...int) {
	t.Helper()
	ctx := context.Background()
	for _, shard := range shards {
		r := RoomInShard(m, shard)
		res, err := m.Campaign(ctx, r, "warm", 5*time.Second, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Resign(ctx, r, res.Token); err != nil {
			t.Fatal(err)
		}
	}
}

// shardData reads the raw document of room's shard ("" when the shard does not exist).
func shardData(t *testing.T, m *rooms.Manager, room string) (string, lease.Version) {
	t.Helper()
	data, ver, err := m.Store().LoadShard(context.Background(), rooms.ShardKey{Namespace: m.Namespace(), Index: m.ShardOf(room)})
	if errors.Is(err, lease.ErrNotFound) {
		return "", 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(data), ver
}

// RunSuite runs the behavioural suite against a store.
func RunSuite(t *testing.T, newStore NewStore) {
	t.Run("CampaignFollowRenewResignReelect", func(t *testing.T) { testCampaignFollowRenewResignReelect(t, newStore) })
	t.Run("Tokens", func(t *testing.T) { testTokens(t, newStore) })
	t.Run("LiveLeaderCampaigningAgainIsFollower", func(t *testing.T) { testLiveLeaderCampaigningAgainIsFollower(t, newStore) })
	t.Run("ExpiryMakesVacant", func(t *testing.T) { testExpiryMakesVacant(t, newStore) })
	t.Run("Validation", func(t *testing.T) { testValidation(t, newStore) })
	t.Run("CapacityOneTwoRoomsRacing", func(t *testing.T) { testCapacityOneTwoRoomsRacing(t, newStore) })
	t.Run("TermsNeverReused", func(t *testing.T) { testTermsNeverReused(t, newStore) })
	t.Run("TermsSurviveAShardRolledBack", func(t *testing.T) { testTermsSurviveAShardRolledBack(t, newStore) })
	t.Run("ReadsAndLosersNeverWrite", func(t *testing.T) { testReadsAndLosersNeverWrite(t, newStore) })
	t.Run("RefusalsReadTheStore", func(t *testing.T) { testRefusalsReadTheStore(t, newStore) })
	t.Run("TokenStoredOnlyAsHash", func(t *testing.T) { testTokenStoredOnlyAsHash(t, newStore) })
	t.Run("Notify", func(t *testing.T) { testNotify(t, newStore) })
	t.Run("UnknownWriteOutcome", func(t *testing.T) { testUnknownOutcome(t, newStore) })
	t.Run("GroupCommit", func(t *testing.T) { testGroupCommit(t, newStore) })
	t.Run("ShardBudget", func(t *testing.T) { testShardBudget(t, newStore) })
	// Only stores that lock activations across processes promise an exact limit across
	// Managers; the Swarm store's limit is exact within one process (docs/rooms.md).
	if _, ok := newStore(t).(rooms.ActivationLocker); ok {
		t.Run("CapacityAcrossManagers", func(t *testing.T) { testCapacityAcrossManagers(t, newStore) })
	}
	t.Run("ConcurrentCampaigns", func(t *testing.T) { testConcurrentCampaigns(t, newStore) })
}

// testCampaignFollowRenewResignReelect: The seed's own scenario: campaign → a second candidate is follower → renew keeps the term
// → resign → re-election gets a higher term.
func testCampaignFollowRenewResignReelect(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	e, m, room := newRoomEnv(t, newStore)
	if len(room) != 32 {
		t.Fatalf("room id %q has %d characters, want 32", room, len(room))
	}
	a, err := m.Campaign(ctx, room, "agent-a", TTL, "host a")
	if err != nil || a.Status != rooms.StatusLeader {
		t.Fatalf("a campaign: %+v, %v", a, err)
	}
	if len(a.Token) != 43 || a.RenewAfter != TTL/2 || a.Leader.Term == 0 || a.Leader.Metadata != "host a" ||
		!a.Leader.ExpiresAt.Equal(e.clock.Now().Add(TTL).Truncate(time.Millisecond)) || a.RoomID != room {
		t.Fatalf("a's grant = %+v", a)
	}
	f := mustFollow(t, m, room, "agent-b", "agent-a")
	if f.Leader.Term != a.Leader.Term || f.Leader.Metadata != "host a" || f.RetryAfter != TTL+rooms.DefaultMaxClockSkew {
		t.Fatalf("b's follower answer = %+v", f)
	}

	e.clock.Advance(3 * time.Second)
	r, err := m.Renew(ctx, room, a.Token, 5*time.Second) // a renewal may shorten the lease
	if err != nil {
		t.Fatalf("renew: %v", err)
	}
	if r.Status != rooms.StatusLeader || r.Leader.Term != a.Leader.Term || r.Token != a.Token || r.RenewAfter != 2500*time.Millisecond ||
		!r.Leader.ExpiresAt.Equal(e.clock.Now().Add(5*time.Second).Truncate(time.Millisecond)) {
		t.Fatalf("renewal = %+v (grant %+v)", r, a)
	}
	st := mustStatus(t, m, room)
	if st.Status != rooms.StatusLeader || st.Leader == nil || st.Leader.Term != a.Leader.Term || st.Leader.CandidateID != "agent-a" ||
		st.RetryAfter != 5*time.Second+rooms.DefaultMaxClockSkew {
		t.Fatalf("status = %+v", st)
	}

	prev, err := m.Resign(ctx, room, a.Token)
	if err != nil || prev != a.Leader.Term {
		t.Fatalf("resign: %d, %v; want previous term %d", prev, err, a.Leader.Term)
	}
	if st := mustStatus(t, m, room); st.Status != rooms.StatusVacant || st.Leader != nil || st.RetryAfter != 0 {
		t.Fatalf("status after resign = %+v", st)
	}
	b := mustLead(t, m, room, "agent-b")
	if b.Leader.Term <= a.Leader.Term || b.Token == a.Token {
		t.Fatalf("re-election: term %d after %d", b.Leader.Term, a.Leader.Term)
	}
}

func testTokens(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	_, m, room := newRoomEnv(t, newStore)
	a := mustLead(t, m, room, "a")
	for _, bad := range []string{"", "short", a.Token + "x", strings.Repeat("*", 43), a.Token[:42] + "B"} {
		// The last one differs only in trailing bits that carry no data: tokens decode
		// strictly, so it is malformed rather than an alias of a's.
		if _, err := m.Renew(ctx, room, bad, TTL); !errors.Is(err, rooms.ErrInvalidToken) {
			t.Errorf("renew with %q: %v, want ErrInvalidToken", bad, err)
		}
		if _, err := m.Resign(ctx, room, bad); !errors.Is(err, rooms.ErrInvalidToken) {
			t.Errorf("resign with %q: %v, want ErrInvalidToken", bad, err)
		}
	}
	other := mustLead(t, m, rooms.NewRoomID(), "x") // a real token, of another room
	if _, err := m.Renew(ctx, room, other.Token, TTL); !errors.Is(err, rooms.ErrNotCurrent) {
		t.Fatalf("renew with a wrong token: %v, want ErrNotCurrent", err)
	}
	if _, err := m.Resign(ctx, room, other.Token); !errors.Is(err, rooms.ErrNotCurrent) {
		t.Fatalf("resign with a wrong token: %v, want ErrNotCurrent", err)
	}
	if _, err := m.Resign(ctx, room, a.Token); err != nil {
		t.Fatal(err)
	}
	// A stale token after resign: 404 lease_not_current.
	if _, err := m.Renew(ctx, room, a.Token, TTL); !errors.Is(err, rooms.ErrVacant) {
		t.Fatalf("renew after resign: %v, want ErrVacant", err)
	}
	if _, err := m.Resign(ctx, room, a.Token); !errors.Is(err, rooms.ErrVacant) {
		t.Fatalf("second resign: %v, want ErrVacant", err)
	}
	b := mustLead(t, m, room, "b")
	// The stale token once another holder owns the room: 400 lease_not_current.
	if _, err := m.Renew(ctx, room, a.Token, TTL); !errors.Is(err, rooms.ErrNotCurrent) {
		t.Fatalf("renew of a's stale token under b: %v, want ErrNotCurrent", err)
	}
	if st := mustStatus(t, m, room); st.Leader == nil || st.Leader.Term != b.Leader.Term {
		t.Fatalf("a's failed calls changed the room: %+v", st)
	}
}

func testLiveLeaderCampaigningAgainIsFollower(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	_, m, room := newRoomEnv(t, newStore)
	a := mustLead(t, m, room, "a")
	_, before := shardData(t, m, room)
	again := mustFollow(t, m, room, "a", "a")
	if again.Leader.Term != a.Leader.Term {
		t.Fatalf("the second campaign changed the term: %d → %d", a.Leader.Term, again.Leader.Term)
	}
	if _, err := m.Renew(ctx, room, a.Token, TTL); err != nil {
		t.Fatalf("the first token stopped working: %v", err)
	}
	if _, after := shardData(t, m, room); after == before {
		t.Fatal("the renewal wrote nothing")
	}
}

func testExpiryMakesVacant(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	e, m, room := newRoomEnv(t, newStore)
	a := mustLead(t, m, room, "a")
	// Until expires_at + max clock skew the lease holds: a replica whose clock is ahead
	// by less than the skew must not hand the room over early.
	e.clock.Advance(TTL)
	if st := mustStatus(t, m, room); st.Status != rooms.StatusLeader || st.RetryAfter != rooms.DefaultMaxClockSkew {
		t.Fatalf("status at expires_at = %+v, want leader for the skew allowance", st)
	}
	mustFollow(t, m, room, "b", "a")
	e.clock.Advance(rooms.DefaultMaxClockSkew)
	if st := mustStatus(t, m, room); st.Status != rooms.StatusVacant || st.Leader != nil {
		t.Fatalf("status after expiry = %+v, want vacant", st)
	}
	if _, err := m.Renew(ctx, room, a.Token, TTL); !errors.Is(err, rooms.ErrVacant) {
		t.Fatalf("renew after expiry: %v, want ErrVacant", err)
	}
	if _, err := m.Resign(ctx, room, a.Token); !errors.Is(err, rooms.ErrVacant) {
		t.Fatalf("resign after expiry: %v, want ErrVacant", err)
	}
	b := mustLead(t, m, room, "b")
	if b.Leader.Term <= a.Leader.Term {
		t.Fatalf("term after expiry %d, before %d", b.Leader.Term, a.Leader.Term)
	}
	if _, err := m.Renew(ctx, room, a.Token, TTL); !errors.Is(err, rooms.ErrNotCurrent) {
		t.Fatalf("a's renew under b: %v, want ErrNotCurrent", err)
	}
}

func testValidation(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	_, m, room := newRoomEnv(t, newStore)
	for _, c := range []struct {
		room, candidate, metadata string
		ttl                       time.Duration
		want                      error
	}{
		{"short", "a", "", TTL, rooms.ErrInvalidRoomID},
		{strings.Repeat("r", 65), "a", "", TTL, rooms.ErrInvalidRoomID},
		{"room/with/slash", "a", "", TTL, rooms.ErrInvalidRoomID},
		{room, "agent/a", "", TTL, rooms.ErrInvalidCandidate},
		{room, "", "", TTL, rooms.ErrInvalidCandidate},
		{room, strings.Repeat("c", 65), "", TTL, rooms.ErrInvalidCandidate},
		{room, "a", strings.Repeat("m", 1025), TTL, rooms.ErrInvalidMetadata},
		{room, "a", "\xff", TTL, rooms.ErrInvalidMetadata},
		{room, "a", "", 4 * time.Second, rooms.ErrInvalidTTL},
		{room, "a", "", 301 * time.Second, rooms.ErrInvalidTTL},
		{room, "a", "", 0, rooms.ErrInvalidTTL},
		{room, "a", "", 5500 * time.Millisecond, rooms.ErrInvalidTTL},
		// The contract's check order: id, candidate, metadata, ttl.
		{"bad", "agent/a", strings.Repeat("m", 1025), 0, rooms.ErrInvalidRoomID},
		{room, "agent/a", strings.Repeat("m", 1025), 0, rooms.ErrInvalidCandidate},
		{room, "a", strings.Repeat("m", 1025), 0, rooms.ErrInvalidMetadata},
	} {
		if _, err := m.Campaign(ctx, c.room, c.candidate, c.ttl, c.metadata); !errors.Is(err, c.want) {
			t.Errorf("campaign(%.20q, %.20q, %v, %d chars): %v, want %v", c.room, c.candidate, c.ttl, len(c.metadata), err, c.want)
		}
	}
	if shards, err := m.Store().ListShards(ctx, m.Namespace()); err != nil || len(shards) != 0 {
		t.Fatalf("invalid campaigns stored %d shards (%v)", len(shards), err)
	}
	// 1024 characters of metadata are accepted — characters, not bytes ('€' is 3 bytes),
	// and kept exactly, HTML-sensitive characters included.
	meta := strings.Repeat("€", 1020) + "<&>\""
	res, err := m.Campaign(ctx, room, "a.b_c:d@e-f", rooms.MinTTL, meta)
	if err != nil || res.Status != rooms.StatusLeader {
		t.Fatalf("campaign with 1024 characters of metadata: %+v, %v", res, err)
	}
	if st := mustStatus(t, m, room); st.Leader == nil || st.Leader.Metadata != meta || st.Leader.CandidateID != "a.b_c:d@e-f" {
		t.Fatalf("status = %+v, want the metadata kept exactly", st.Leader)
	}
	if _, err := m.Renew(ctx, room, res.Token, rooms.MaxTTL); err != nil {
		t.Fatalf("renew with the maximum ttl: %v", err)
	}
	if _, err := m.Status(ctx, "bad id"); !errors.Is(err, rooms.ErrInvalidRoomID) {
		t.Fatalf("status of an invalid id: %v", err)
	}
}

// testCapacityOneTwoRoomsRacing: The seed's capacity test: capacity 1, two rooms racing, exactly one wins.
func testCapacityOneTwoRoomsRacing(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	e := newEnv(t, newStore)
	m := e.manager(nil, rooms.WithMaxActiveRooms(1))
	// Rooms of different shards: the limit must hold across shards, not only within one.
	r1 := rooms.NewRoomID()
	r2 := RoomInShard(m, (m.ShardOf(r1)+1)%m.Shards())
	results := race(ctx, 2, func(i int) (rooms.Result, error) {
		return m.Campaign(ctx, []string{r1, r2}[i], "c", TTL, "")
	})
	won, refused := -1, -1
	for i, r := range results {
		var ce *rooms.CapacityError
		switch {
		case r.err == nil && r.res.Status == rooms.StatusLeader:
			won = i
		case errors.As(r.err, &ce) && errors.Is(r.err, rooms.ErrCapacity):
			if ce.Active != 1 || ce.Max != 1 || ce.RetryAfter < time.Second || ce.RetryAfter > TTL+rooms.DefaultMaxClockSkew {
				t.Errorf("capacity error %+v", ce)
			}
			refused = i
		default:
			t.Errorf("campaign %d: %+v, %v", i, r.res, r.err)
		}
	}
	if won < 0 || refused < 0 {
		t.Fatalf("want exactly one leader and one capacity refusal: %+v", results)
	}
	active, other := []string{r1, r2}[won], []string{r1, r2}[refused]
	// The active room is not limited: followers and renewals go on.
	mustFollow(t, m, active, "d", "c")
	if _, err := m.Renew(ctx, active, results[won].res.Token, TTL); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Campaign(ctx, other, "c", TTL, ""); !errors.Is(err, rooms.ErrCapacity) {
		t.Fatalf("second campaign in the other room: %v, want ErrCapacity", err)
	}
	// An expired room is not active any more.
	e.clock.Advance(TTL + rooms.DefaultMaxClockSkew)
	o := mustLead(t, m, other, "c")
	if _, err := m.Campaign(ctx, active, "c", TTL, ""); !errors.Is(err, rooms.ErrCapacity) {
		t.Fatalf("campaign in the expired room while the other is active: %v, want ErrCapacity", err)
	}
	if _, err := m.Resign(ctx, other, o.Token); err != nil {
		t.Fatal(err)
	}
	mustLead(t, m, active, "c")
}

func testTermsNeverReused(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	e, m, room := newRoomEnv(t, newStore)
	var terms []uint64
	next := func(r rooms.Result) {
		t.Helper()
		if n := len(terms); n > 0 && r.Leader.Term <= terms[n-1] {
			t.Fatalf("term %d after %v", r.Leader.Term, terms)
		}
		terms = append(terms, r.Leader.Term)
	}
	a := mustLead(t, m, room, "a")
	next(a)
	if _, err := m.Resign(ctx, room, a.Token); err != nil {
		t.Fatal(err)
	}
	next(mustLead(t, m, room, "a")) // resigned: the room left the shard, its term did not

	e.clock.Advance(TTL + rooms.DefaultMaxClockSkew) // expired, still stored
	if data, _ := shardData(t, m, room); !strings.Contains(data, room) {
		t.Fatal("an expired room was removed without a write")
	}
	neighbour := RoomInShard(m, m.ShardOf(room))
	next(mustLead(t, m, neighbour, "n")) // a write to the shard collects the expired room
	if data, _ := shardData(t, m, room); strings.Contains(data, room) {
		t.Fatalf("the expired room survived a write to its shard: %s", data)
	}
	next(mustLead(t, m, room, "a")) // re-created after garbage collection

	// A restarted server (a new Manager on a new handle).
	m2 := e.manager(e.new(t))
	e.clock.Advance(TTL + rooms.DefaultMaxClockSkew)
	next(mustLead(t, m2, room, "b"))

	// The shard itself removed and created again: its floor restarts from the clock (in
	// microseconds), above every term it issued a second earlier.
	if err := m.Store().DeleteShards(ctx, m.Namespace()); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	next(mustLead(t, m, room, "c"))
}

func testTermsSurviveAShardRolledBack(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	// A store that loses the newest version of a shard (a damaged slot file, a restored
	// backup) must still never issue a term twice: the next term is above every term
	// acknowledged before the loss.
	e, m, room := newRoomEnv(t, newStore)
	neighbour := RoomInShard(m, m.ShardOf(room))
	mustLead(t, m, room, "a")
	old, _ := shardData(t, m, room)
	e.clock.Advance(time.Millisecond)
	b := mustLead(t, m, neighbour, "b") // acknowledged, then lost
	_, cur := shardData(t, m, room)
	key := rooms.ShardKey{Namespace: m.Namespace(), Index: m.ShardOf(room)}
	if _, err := m.Store().UpdateShard(ctx, key, []byte(old), cur); err != nil {
		t.Fatal(err)
	}
	// A restarted server reads the rolled-back shard: the neighbour looks vacant.
	e.clock.Advance(time.Millisecond)
	m2 := e.manager(e.new(t))
	c := mustLead(t, m2, neighbour, "c")
	if c.Leader.Term <= b.Leader.Term {
		t.Fatalf("term %d after the rollback, but term %d was acknowledged before it", c.Leader.Term, b.Leader.Term)
	}
}

func testReadsAndLosersNeverWrite(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	e, m, room := newRoomEnv(t, newStore)
	if st := mustStatus(t, m, room); st.Status != rooms.StatusVacant {
		t.Fatalf("status of an unknown room = %+v", st)
	}
	if shards, err := m.Store().ListShards(ctx, m.Namespace()); err != nil || len(shards) != 0 {
		t.Fatalf("a status read created %d shards (%v)", len(shards), err)
	}
	a := mustLead(t, m, room, "a")
	_, v1 := shardData(t, m, room)
	mustFollow(t, m, room, "b", "a")
	mustFollow(t, m, room, "a", "a")
	mustStatus(t, m, room)
	if _, err := m.Renew(ctx, room, strings.Repeat("A", 43), TTL); !errors.Is(err, rooms.ErrNotCurrent) {
		t.Fatal(err)
	}
	e.clock.Advance(TTL + rooms.DefaultMaxClockSkew)
	mustStatus(t, m, room)
	if _, err := m.Renew(ctx, room, a.Token, TTL); !errors.Is(err, rooms.ErrVacant) {
		t.Fatal(err)
	}
	if _, v2 := shardData(t, m, room); v2 != v1 {
		t.Fatalf("reads, followers and refusals wrote: version %d → %d", v1, v2)
	}
}

// testRefusalsReadTheStore: A Manager remembers its last write to skip a read before the next one; a refusal must
// never come from that memory.
func testRefusalsReadTheStore(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	e := newEnv(t, newStore)
	m1, m2 := e.manager(nil), e.manager(e.new(t))
	room := rooms.NewRoomID()
	a := mustLead(t, m1, room, "a")
	e.clock.Advance(TTL + rooms.DefaultMaxClockSkew)
	mustLead(t, m2, room, "b")
	// m1 remembers a's expired term: by its memory the room is vacant (404), by the store
	// b holds it (400).
	if _, err := m1.Renew(ctx, room, a.Token, TTL); !errors.Is(err, rooms.ErrNotCurrent) {
		t.Fatalf("renew of a's term under b through the manager that wrote a's: %v, want ErrNotCurrent", err)
	}
	mustFollow(t, m1, room, "c", "b")
}

func testTokenStoredOnlyAsHash(t *testing.T, newStore NewStore) {
	_, m, room := newRoomEnv(t, newStore)
	a := mustLead(t, m, room, "a")
	data, _ := shardData(t, m, room)
	raw, err := base64.RawURLEncoding.DecodeString(a.Token)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	if strings.Contains(data, a.Token) || !strings.Contains(data, base64.RawURLEncoding.EncodeToString(sum[:])) {
		t.Fatalf("the shard should hold the token's SHA-256 and not the token: %s", data)
	}
}

func testNotify(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	e, m, room := newRoomEnv(t, newStore)
	nctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := m.Notify(nctx, room)
	if _, ok := e.store.(rooms.ShardNotifier); !ok {
		if !errors.Is(err, rooms.ErrNoNotifier) {
			t.Fatalf("notify on a store without notifications: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // let an event stream subscribe before the write
	drain(ch)
	mustLead(t, m, room, "a")
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no notification within 5 s of a campaign")
	}
	cancel()
	for range ch { // the channel is closed once ctx ends
	}
}

type raced[T any] struct {
	res T
	err error
}

// race runs n calls at once (as near as goroutines allow) and returns their results.
func race[T any](_ context.Context, n int, call func(i int) (T, error)) []raced[T] {
	out := make([]raced[T], n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			out[i].res, out[i].err = call(i)
		})
	}
	close(start)
	wg.Wait()
	return out
}

func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
