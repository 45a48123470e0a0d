package roomstest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// testUnknownOutcome: a write whose answer is lost (Swarm: timeout, lost Raft leader) is
// resolved by reading back, and a campaign or resignation that did land is reported as done —
// also when another replica wrote the shard in between, so the bytes read back differ.
func testUnknownOutcome(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	e := newEnv(t, newStore)
	hs := &hookStore{Store: e.store}
	m := e.manager(hs)
	other := e.manager(nil) // another replica of the server
	appliedThenLost := func(between func()) func(write func() (lease.Version, error)) (lease.Version, error) {
		return func(write func() (lease.Version, error)) (lease.Version, error) {
			if _, err := write(); err != nil {
				return 0, err
			}
			if between != nil {
				between()
			}
			return 0, fmt.Errorf("%w: injected after the write", lease.ErrAmbiguous)
		}
	}

	// Applied, answer lost: the read-back finds exactly the bytes written.
	r1 := rooms.NewRoomID()
	hs.once(appliedThenLost(nil))
	a := mustLead(t, m, r1, "a")
	if _, err := other.Renew(ctx, r1, a.Token, TTL); err != nil {
		t.Fatalf("the token of a campaign whose answer was lost: %v", err)
	}

	// Not applied: decided again and written.
	r2 := rooms.NewRoomID()
	hs.once(func(func() (lease.Version, error)) (lease.Version, error) {
		return 0, fmt.Errorf("%w: injected instead of the write", lease.ErrAmbiguous)
	})
	b := mustLead(t, m, r2, "b")
	if st := mustStatus(t, other, r2); st.Leader == nil || st.Leader.Term != b.Leader.Term {
		t.Fatalf("status = %+v, want b's term %d", st, b.Leader.Term)
	}

	// Applied, then another replica renews a neighbour before the read-back: the campaign finds
	// its own term by the token hash, and is leader, not a follower of itself.
	r3 := rooms.NewRoomID()
	neighbour := RoomInShard(m, m.ShardOf(r3))
	n := mustLead(t, other, neighbour, "n")
	renewNeighbour := func() {
		if _, err := other.Renew(ctx, neighbour, n.Token, TTL); err != nil {
			t.Errorf("neighbour renew: %v", err)
		}
	}
	hs.once(appliedThenLost(renewNeighbour))
	c := mustLead(t, m, r3, "c")
	if st := mustStatus(t, other, r3); st.Leader == nil || st.Leader.Term != c.Leader.Term || st.Leader.CandidateID != "c" {
		t.Fatalf("status = %+v, want c's term %d", st, c.Leader.Term)
	}
	// The same for a resignation.
	hs.once(appliedThenLost(renewNeighbour))
	prev, err := m.Resign(ctx, r3, c.Token)
	if err != nil || prev != c.Leader.Term {
		t.Fatalf("resign with a lost answer: %d, %v; want %d", prev, err, c.Leader.Term)
	}
	if st := mustStatus(t, other, r3); st.Status != rooms.StatusVacant {
		t.Fatalf("status after resign = %+v", st)
	}

	// Applied, then the term ran out and another replica won the room before the read-back
	// (a Swarm write that commits through a new Raft leader while the manager that took it is
	// cut off): the campaign may have won a term that has ended since, so it is not answered as
	// a plain follower, nor is a renewal a plain refusal. Without the activation limit, so
	// that the other replica's activation does not wait for this one's.
	unlimited := rooms.WithMaxActiveRooms(0)
	hs2 := &hookStore{Store: e.store}
	m2, other2 := e.manager(hs2, unlimited), e.manager(nil, unlimited)
	takeOver := func(room string) func() {
		return func() {
			e.clock.Advance(TTL + rooms.DefaultMaxClockSkew + time.Second)
			if res, err := other2.Campaign(ctx, room, "d", TTL, ""); err != nil || res.Status != rooms.StatusLeader {
				t.Errorf("the other replica's campaign in %s: %+v, %v", room, res, err)
			}
		}
	}
	r4 := rooms.NewRoomID()
	hs2.once(appliedThenLost(takeOver(r4)))
	if res, err := m2.Campaign(ctx, r4, "e", TTL, ""); !errors.Is(err, lease.ErrAmbiguous) {
		t.Fatalf("a campaign whose write landed and whose term then ended: %+v, %v; want an error that wraps lease.ErrAmbiguous", res, err)
	}
	r5 := rooms.NewRoomID()
	f := mustLead(t, m2, r5, "f")
	hs2.once(appliedThenLost(takeOver(r5)))
	if _, err := m2.Renew(ctx, r5, f.Token, TTL); !errors.Is(err, lease.ErrAmbiguous) || !errors.Is(err, rooms.ErrNotCurrent) {
		t.Fatalf("a renewal whose write landed and whose term then ended: %v; want an error that wraps lease.ErrAmbiguous and rooms.ErrNotCurrent", err)
	}
}

// testGroupCommit: concurrent renewals of rooms of one shard share writes.
func testGroupCommit(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	e := newEnv(t, newStore)
	hs := &hookStore{Store: e.store, delay: 50 * time.Millisecond}
	m := e.manager(hs)
	const n = 8
	ids := make([]string, n)
	ids[0] = rooms.NewRoomID()
	for i := 1; i < n; i++ {
		ids[i] = RoomInShard(m, m.ShardOf(ids[0]))
	}
	won := race(ctx, n, func(i int) (rooms.Result, error) { return m.Campaign(ctx, ids[i], "c", TTL, "") })
	for i, r := range won {
		if r.err != nil || r.res.Status != rooms.StatusLeader {
			t.Fatalf("campaign %d: %+v, %v", i, r.res, r.err)
		}
	}
	before := hs.writes.Load()
	renewed := race(ctx, n, func(i int) (rooms.Result, error) { return m.Renew(ctx, ids[i], won[i].res.Token, TTL) })
	for i, r := range renewed {
		if r.err != nil || r.res.Leader.Term != won[i].res.Leader.Term {
			t.Fatalf("renew %d: %+v, %v", i, r.res, r.err)
		}
	}
	// The first renewal to arrive writes alone; the others queue behind its 50 ms write and
	// share the next one.
	if w := hs.writes.Load() - before; w > 3 {
		t.Fatalf("%d concurrent renewals of one shard took %d writes, want at most 3", n, w)
	}
}

// testShardBudget: a shard never grows past its byte budget, whatever the metadata.
func testShardBudget(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	e := newEnv(t, newStore)
	m := e.manager(nil, rooms.WithMaxShardBytes(rooms.MinShardBytes))
	// The most expensive metadata: control characters take 6 bytes each in JSON.
	big := strings.Repeat("\x01", rooms.MaxMetadata)
	r1 := rooms.NewRoomID()
	shard := m.ShardOf(r1)
	r2, r3, r4 := RoomInShard(m, shard), RoomInShard(m, shard), RoomInShard(m, shard)
	for _, r := range []string{r1, r2} {
		if _, err := m.Campaign(ctx, r, "c", TTL, big); err != nil {
			t.Fatalf("campaign with large metadata: %v", err)
		}
	}
	_, err := m.Campaign(ctx, r3, "c", TTL, big)
	var ce *rooms.CapacityError
	if !errors.Is(err, rooms.ErrShardFull) || !errors.Is(err, rooms.ErrCapacity) || !errors.As(err, &ce) || ce.RetryAfter < time.Second {
		t.Fatalf("a third large room in a %d-byte shard: %v, want ErrShardFull", rooms.MinShardBytes, err)
	}
	mustLead(t, m, r4, "small") // a small room still fits
	if data, _ := shardData(t, m, r1); len(data) > rooms.MinShardBytes {
		t.Fatalf("the shard holds %d bytes, over its budget of %d", len(data), rooms.MinShardBytes)
	}
	mustLead(t, m, RoomInShard(m, (shard+1)%m.Shards()), "elsewhere") // the budget is per shard
	e.clock.Advance(TTL + rooms.DefaultMaxClockSkew)                  // the large rooms expire…
	if _, err := m.Campaign(ctx, r3, "c", TTL, big); err != nil {     // …and their bytes are reused
		t.Fatalf("campaign after the large rooms expired: %v", err)
	}
}

// testCapacityAcrossManagers: with a store that locks activations across processes
// (rooms.ActivationLocker), the limit is exact across Managers too.
func testCapacityAcrossManagers(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	e := newEnv(t, newStore)
	ms := []*rooms.Manager{e.manager(e.new(t), rooms.WithMaxActiveRooms(1)), e.manager(e.new(t), rooms.WithMaxActiveRooms(1))}
	for round := range 5 {
		ids := []string{rooms.NewRoomID(), ""}
		ids[1] = RoomInShard(ms[0], (ms[0].ShardOf(ids[0])+1)%ms[0].Shards())
		results := race(ctx, 2, func(i int) (rooms.Result, error) { return ms[i].Campaign(ctx, ids[i], "c", TTL, "") })
		winners := 0
		for i, r := range results {
			switch {
			case r.err == nil:
				winners++
				if _, err := ms[i].Resign(ctx, ids[i], r.res.Token); err != nil {
					t.Fatal(err)
				}
			case !errors.Is(r.err, rooms.ErrCapacity):
				t.Fatalf("round %d, manager %d: %v", round, i, r.err)
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d winners with capacity 1", round, winners)
		}
	}
}

// testConcurrentCampaigns: several Managers (as separate server processes), each with several
// goroutines, campaign in one room on the real clock (CheckGrants has the promises checked).
func testConcurrentCampaigns(t *testing.T, newStore NewStore) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e := newEnv(t, newStore)
	const managers, goroutines, wins = 3, 2, 2
	room := rooms.NewRoomID()
	base := time.Now()
	clock := func() int64 { return int64(time.Since(base)) } // monotonic, one process
	var (
		mu     sync.Mutex
		grants []Grant
		wg     sync.WaitGroup
	)
	for mi := range managers {
		m, err := rooms.New(e.new(t), e.ns) // the real clock: leases of 30 s never expire here
		if err != nil {
			t.Fatal(err)
		}
		for gi := range goroutines {
			wg.Go(func() {
				got, err := Contend(ctx, m, room, fmt.Sprintf("m%d-g%d", mi, gi), wins, clock)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				grants = append(grants, got...)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if len(grants) != managers*goroutines*wins {
		t.Fatalf("%d terms won, want %d", len(grants), managers*goroutines*wins)
	}
	CheckGrants(t, grants)
}

// Grant is one term won by a contender of a concurrency test, with the times (of one monotonic
// clock shared by all contenders, in nanoseconds) that order it against the others.
type Grant struct {
	// Who is the candidate id.
	Who string `json:"who"`
	// Term is the term won.
	Term uint64 `json:"term"`
	// CampaignStart is when the winning campaign was called.
	CampaignStart int64 `json:"campaign_start"`
	// Leader is when the winning campaign returned.
	Leader int64 `json:"leader"`
	// ResignStart is when the term's resignation was called (after one renewal).
	ResignStart int64 `json:"resign_start"`
}

// Contend campaigns in room as who until it has won wins terms, renewing and resigning each
// term at once; clock reads the shared monotonic clock. A follower retries after a few
// milliseconds.
func Contend(ctx context.Context, m *rooms.Manager, room, who string, wins int, clock func() int64) ([]Grant, error) {
	var out []Grant
	for len(out) < wins {
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("%s: %w after %d terms", who, err, len(out))
		}
		start := clock()
		res, err := m.Campaign(ctx, room, who, 30*time.Second, "")
		if err != nil {
			return out, fmt.Errorf("%s campaign: %w", who, err)
		}
		if res.Status != rooms.StatusLeader {
			time.Sleep(time.Duration(rand.IntN(5)+1) * time.Millisecond)
			continue
		}
		g := Grant{Who: who, Term: res.Leader.Term, CampaignStart: start, Leader: clock()}
		if r, err := m.Renew(ctx, room, res.Token, 30*time.Second); err != nil || r.Leader.Term != g.Term {
			return out, fmt.Errorf("%s renew of term %d: %+v, %w", who, g.Term, r, err)
		}
		g.ResignStart = clock()
		if prev, err := m.Resign(ctx, room, res.Token); err != nil || prev != g.Term {
			return out, fmt.Errorf("%s resign of term %d: %d, %w", who, g.Term, prev, err)
		}
		out = append(out, g)
	}
	return out, nil
}

// CheckGrants checks the promises of a room under concurrent campaigns (leases never expire
// during the run): every term has one leader, the next term is only won after the previous
// leader resigned (never two leaders at once), and terms increase in real time (a term won
// before another was asked for is lower).
func CheckGrants(t *testing.T, grants []Grant) {
	t.Helper()
	slices.SortFunc(grants, func(a, b Grant) int { return cmp.Compare(a.Term, b.Term) })
	for i := 1; i < len(grants); i++ {
		prev, g := grants[i-1], grants[i]
		if g.Term == prev.Term {
			t.Errorf("term %d granted twice: %s and %s", g.Term, prev.Who, g.Who)
		}
		if g.Leader <= prev.ResignStart {
			t.Errorf("%s won term %d before %s resigned term %d", g.Who, g.Term, prev.Who, prev.Term)
		}
	}
	for _, a := range grants {
		for _, b := range grants {
			if a.Leader < b.CampaignStart && a.Term >= b.Term {
				t.Errorf("term %d (%s) won before term %d (%s) was asked for", a.Term, a.Who, b.Term, b.Who)
			}
		}
	}
}
