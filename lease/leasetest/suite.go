package leasetest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// NewStore returns the store under test. Every subtest uses its own namespace, so one store may
// serve the whole suite.
type NewStore func(t *testing.T) lease.Store

var nsCounter atomic.Int64

// Namespace returns a namespace unique to this test process and call.
func Namespace(t testing.TB) string {
	return fmt.Sprintf("t%d-%d-%d", time.Now().UnixMilli()%1_000_000, nsCounter.Add(1), len(t.Name()))
}

// contender is one party of a suite scenario: its own clock, its own Election.
type contender struct {
	clock *FakeClock
	e     *lease.Election
}

func newContender(t *testing.T, store lease.Store, ns, holder string, opts ...lease.Option) contender {
	t.Helper()
	clock := NewFakeClock(time.Now())
	e, err := lease.New(store, ns, lease.Identity{HolderID: holder, NodeID: "node-" + holder, TaskID: "task-" + holder},
		append([]lease.Option{lease.WithClock(clock), lease.WithTTL(2 * time.Second), lease.WithMaxClockSkew(500 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Destroy(context.Background()) })
	return contender{clock: clock, e: e}
}

// mustFollowFence fails t unless got, the fence of a new term of c after a term with fence
// prev, is prev + 1 — or, on a store whose fences follow the clock (lease.ClockFencer), the
// higher of prev + 1 and c's wall clock in microseconds.
func mustFollowFence(t *testing.T, c contender, what string, prev, got uint64) {
	t.Helper()
	want := prev + 1
	if c.e.ClockFences() {
		want = max(want, uint64(c.clock.Now().UnixMicro()))
	}
	if got != want {
		t.Fatalf("%s = %d, want %d", what, got, want)
	}
}

func mustAcquire(t *testing.T, c contender) lease.Grant {
	t.Helper()
	res, err := c.e.TryAcquire(context.Background())
	if err != nil {
		t.Fatalf("%s try-acquire: %v", c.e.Identity().HolderID, err)
	}
	if !res.Acquired {
		t.Fatalf("%s try-acquire: not acquired; held by %q fence %d", c.e.Identity().HolderID, res.Current.HolderID, res.Current.Fence)
	}
	return res.Grant
}

func mustNotAcquire(t *testing.T, c contender, wantHolder string) lease.TryAcquireResult {
	t.Helper()
	res, err := c.e.TryAcquire(context.Background())
	if err != nil {
		t.Fatalf("%s try-acquire: %v", c.e.Identity().HolderID, err)
	}
	if res.Acquired {
		t.Fatalf("%s try-acquire: acquired fence %d, want held by %q", c.e.Identity().HolderID, res.Grant.Fence, wantHolder)
	}
	if res.Current.HolderID != wantHolder || !res.Current.Acquired {
		t.Fatalf("%s try-acquire: current holder %q (acquired=%v), want %q", c.e.Identity().HolderID, res.Current.HolderID, res.Current.Acquired, wantHolder)
	}
	return res
}

// RunElectionSuite runs the behavioural suite of the lease model (docs/safety.md §1) against a store. It drives the engine
// with fake clocks, so it runs unchanged on the memory, file and Swarm stores.
func RunElectionSuite(t *testing.T, newStore NewStore) {
	t.Run("AcquireRenewReleaseHandover", func(t *testing.T) { testAcquireRenewReleaseHandover(t, newStore) })
	t.Run("Incarnations", func(t *testing.T) { testIncarnations(t, newStore) })
	t.Run("SameHolderOtherTaskWaits", func(t *testing.T) { testSameHolderOtherTaskWaits(t, newStore) })
	t.Run("ExpiryByWallClockWaitsForSkew", func(t *testing.T) { testExpiryByWallClockWaitsForSkew(t, newStore) })
	t.Run("ExpiryByMonotonicClockIgnoresWallClock", func(t *testing.T) { testExpiryByMonotonicClockIgnoresWallClock(t, newStore) })
	t.Run("RenewalResetsObservation", func(t *testing.T) { testRenewalResetsObservation(t, newStore) })
	t.Run("ContenderUsesHolderTTL", func(t *testing.T) { testContenderUsesHolderTTL(t, newStore) })
	t.Run("HolderDeadlineIsMonotonicWithMargin", func(t *testing.T) { testHolderDeadlineIsMonotonicWithMargin(t, newStore) })
	t.Run("SnapshotAcquiredFollowsExpiry", func(t *testing.T) { testSnapshotAcquiredFollowsExpiry(t, newStore) })
	t.Run("InitIsIdempotent", func(t *testing.T) { testInitIsIdempotent(t, newStore) })
	t.Run("DestroyAndRecreateNeverLowersFence", func(t *testing.T) { testDestroyAndRecreateNeverLowersFence(t, newStore) })
	t.Run("NotifiesWrites", func(t *testing.T) { testNotifiesWrites(t, newStore) })
	t.Run("ConcurrentAcquireHasOneWinner", func(t *testing.T) { testConcurrentAcquireHasOneWinner(t, newStore) })
}

func testAcquireRenewReleaseHandover(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	store := newStore(t)
	ns := Namespace(t)
	a, b := newContender(t, store, ns, "a"), newContender(t, store, ns, "b")

	g := mustAcquire(t, a)
	if g.Fence == 0 || g.HolderID != "a" || g.TaskID != "task-a" || g.NodeID != "node-a" {
		t.Fatalf("grant = %+v", g)
	}
	mustNotAcquire(t, b, "a")

	renewed, err := a.e.Renew(ctx, g.Fence)
	if err != nil {
		t.Fatalf("a renew: %v", err)
	}
	if renewed.Fence != g.Fence {
		t.Fatalf("renew changed the fence: %d → %d", g.Fence, renewed.Fence)
	}
	if _, err := b.e.Renew(ctx, g.Fence); !errors.Is(err, lease.ErrNotHolder) {
		t.Fatalf("b renew of a's fence: %v, want ErrNotHolder", err)
	}
	if err := b.e.Release(ctx, g.Fence); !errors.Is(err, lease.ErrNotHolder) {
		t.Fatalf("b release of a's fence: %v, want ErrNotHolder", err)
	}
	if err := a.e.Release(ctx, g.Fence+1); !errors.Is(err, lease.ErrNotHolder) {
		t.Fatalf("a release of a wrong fence: %v, want ErrNotHolder", err)
	}
	if err := a.e.Release(ctx, g.Fence); err != nil {
		t.Fatalf("a release: %v", err)
	}
	snap, err := b.e.Inspect(ctx)
	if err != nil || snap.Acquired || snap.Held() || snap.Fence != g.Fence {
		t.Fatalf("after release: %+v, %v (want no holder, fence kept at %d)", snap, err, g.Fence)
	}
	if err := a.e.Release(ctx, g.Fence); !errors.Is(err, lease.ErrNotHolder) {
		t.Fatalf("second release: %v, want ErrNotHolder", err)
	}
	gb := mustAcquire(t, b)
	mustFollowFence(t, b, "b's fence after a's release", g.Fence, gb.Fence)
	if _, err := a.e.Renew(ctx, g.Fence); !errors.Is(err, lease.ErrNotHolder) {
		t.Fatalf("a renew after losing: %v, want ErrNotHolder", err)
	}
}

// testIncarnations: a live term under this identity of another incarnation (a restarted
// process) is taken over only on evidence or expiry; one of this very incarnation (a one-shot
// command's caller acquiring again) starts a new term at once. Every store keeps the
// incarnation with the record.
func testIncarnations(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	store := newStore(t)
	ns := Namespace(t)
	first, second := lease.Incarnation{ID: "first", Boot: "b"}, lease.Incarnation{ID: "second", PID: 7, PIDStart: 9, PIDNS: 4, PIDGroup: 7}
	a := newContender(t, store, ns, "a", lease.WithIncarnation(first))
	g1 := mustAcquire(t, a)
	if g1.Incarnation != first.String() {
		t.Fatalf("the term records incarnation %q, want %q", g1.Incarnation, first)
	}
	restarted := newContender(t, store, ns, "a", lease.WithIncarnation(second))
	mustNotAcquire(t, restarted, "a")
	proven := newContender(t, store, ns, "a", lease.WithIncarnation(second), lease.WithWitness(goneWitness{}))
	res, err := proven.e.TryAcquire(ctx)
	if err != nil || !res.Acquired || res.Evidence != goneEvidence {
		t.Fatalf("try-acquire with the holder proven gone: acquired=%v evidence=%q err=%v", res.Acquired, res.Evidence, err)
	}
	g2 := res.Grant
	mustFollowFence(t, proven, "fence after the takeover", g1.Fence, g2.Fence)
	if snap, err := a.e.Inspect(ctx); err != nil || snap.Incarnation != second.String() || snap.Fence != g2.Fence {
		t.Fatalf("the store shows %+v, %v; want fence %d of incarnation %q", snap, err, g2.Fence, second)
	}
	if _, err := a.e.Renew(ctx, g1.Fence); !errors.Is(err, lease.ErrNotHolder) {
		t.Fatalf("renew of the superseded fence: %v, want ErrNotHolder", err)
	}
	// The same incarnation again (a one-shot's caller acquiring once more): a new term at once.
	g3 := mustAcquire(t, restarted)
	mustFollowFence(t, restarted, "re-acquire fence", g2.Fence, g3.Fence)
	// The same identity may renew the current fence from any process: the fence is the term's.
	if g, err := a.e.Renew(ctx, g3.Fence); err != nil || g.Fence != g3.Fence || g.Incarnation != second.String() {
		t.Fatalf("renew of the current fence by the same identity: %+v, %v (want the term's incarnation kept)", g, err)
	}
}

// goneWitness proves every holder gone.
type goneWitness struct{}

const goneEvidence = "the suite's witness"

func (goneWitness) Gone(context.Context, lease.Record) (string, time.Duration) {
	return goneEvidence, 0
}

func testSameHolderOtherTaskWaits(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	store := newStore(t)
	ns := Namespace(t)
	a := newContender(t, store, ns, "a")
	mustAcquire(t, a)
	other, err := lease.New(store, ns, lease.Identity{HolderID: "a", TaskID: "another-task"},
		lease.WithClock(a.clock), lease.WithTTL(2*time.Second), lease.WithMaxClockSkew(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	res, err := other.TryAcquire(ctx)
	if err != nil || res.Acquired {
		t.Fatalf("same holder ID, other task: acquired=%v err=%v; want held", res.Acquired, err)
	}
}

func testExpiryByWallClockWaitsForSkew(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	store := newStore(t)
	ns := Namespace(t)
	a, b := newContender(t, store, ns, "a"), newContender(t, store, ns, "b")
	g := mustAcquire(t, a)
	b.clock.Advance(2 * time.Second) // exactly at expires_at: not past it by the skew
	mustNotAcquire(t, b, "a")
	b.clock.JumpWall(400 * time.Millisecond) // past expiry but within the 500 ms skew
	mustNotAcquire(t, b, "a")
	b.clock.JumpWall(200 * time.Millisecond) // past expiry + skew
	gb := mustAcquire(t, b)
	mustFollowFence(t, b, "takeover fence", g.Fence, gb.Fence)
	if _, err := a.e.Renew(ctx, g.Fence); !errors.Is(err, lease.ErrNotHolder) {
		t.Fatalf("renew by the expired holder after takeover: %v, want ErrNotHolder", err)
	}
}

func testExpiryByMonotonicClockIgnoresWallClock(t *testing.T, newStore NewStore) {
	store := newStore(t)
	ns := Namespace(t)
	a, b := newContender(t, store, ns, "a"), newContender(t, store, ns, "b")
	mustAcquire(t, a)
	// b's wall clock is an hour behind: the wall rule would never fire in time.
	b.clock.JumpWall(-time.Hour)
	mustNotAcquire(t, b, "a") // first observation
	b.clock.Advance(2*time.Second - time.Millisecond)
	mustNotAcquire(t, b, "a")
	b.clock.Advance(time.Millisecond) // unchanged for a full TTL of b's own time
	mustAcquire(t, b)
}

func testRenewalResetsObservation(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	store := newStore(t)
	ns := Namespace(t)
	a, b := newContender(t, store, ns, "a"), newContender(t, store, ns, "b")
	g := mustAcquire(t, a)
	b.clock.JumpWall(-time.Hour) // only the monotonic rule can fire for b
	mustNotAcquire(t, b, "a")
	b.clock.Advance(1500 * time.Millisecond)
	a.clock.Advance(1500 * time.Millisecond)
	if _, err := a.e.Renew(ctx, g.Fence); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(1 * time.Second) // 2.5 s since b first saw a lease that was renewed since
	mustNotAcquire(t, b, "a")
	b.clock.Advance(2 * time.Second) // the renewed record unchanged for a full TTL
	mustAcquire(t, b)
}

func testContenderUsesHolderTTL(t *testing.T, newStore NewStore) {
	store := newStore(t)
	ns := Namespace(t)
	a := newContender(t, store, ns, "a", lease.WithTTL(10*time.Second))
	b := newContender(t, store, ns, "b", lease.WithTTL(time.Second), lease.WithMaxClockSkew(100*time.Millisecond))
	mustAcquire(t, a)
	b.clock.JumpWall(-time.Hour)
	mustNotAcquire(t, b, "a")
	b.clock.Advance(5 * time.Second) // far past b's own TTL, within a's
	mustNotAcquire(t, b, "a")
	b.clock.Advance(5 * time.Second)
	mustAcquire(t, b)
}

func testHolderDeadlineIsMonotonicWithMargin(t *testing.T, newStore NewStore) {
	store := newStore(t)
	a := newContender(t, store, Namespace(t), "a", lease.WithTTL(10*time.Second))
	g := mustAcquire(t, a)
	want := 10*time.Second - lease.SafetyMargin(10*time.Second)
	if got := a.e.Remaining(g); got != want {
		t.Fatalf("remaining right after acquiring = %v, want %v", got, want)
	}
	a.clock.JumpWall(time.Hour) // wall jumps do not move the deadline
	a.clock.Advance(want)
	if got := a.e.Remaining(g); got != 0 {
		t.Fatalf("remaining at the deadline = %v, want 0", got)
	}
}

func testSnapshotAcquiredFollowsExpiry(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	store := newStore(t)
	ns := Namespace(t)
	a, b := newContender(t, store, ns, "a"), newContender(t, store, ns, "b")
	snap, err := b.e.Inspect(ctx)
	if err != nil || snap.Exists || snap.Acquired {
		t.Fatalf("inspect before anything: %+v, %v; want not existing", snap, err)
	}
	mustAcquire(t, a)
	if snap, err = b.e.Inspect(ctx); err != nil || !snap.Exists || !snap.Acquired || snap.HolderID != "a" {
		t.Fatalf("inspect while held: %+v, %v", snap, err)
	}
	b.clock.Advance(3 * time.Second)
	if snap, err = b.e.Inspect(ctx); err != nil || snap.Acquired || snap.HolderID != "a" {
		t.Fatalf("inspect after expiry: %+v, %v; want acquired=false with the last holder", snap, err)
	}
}

func testInitIsIdempotent(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	store := newStore(t)
	a := newContender(t, store, Namespace(t), "a")
	s1, err := a.e.Init(ctx)
	if err != nil || !s1.Exists || s1.Held() {
		t.Fatalf("init: %+v, %v", s1, err)
	}
	s2, err := a.e.Init(ctx)
	if err != nil || s2.Fence != s1.Fence || s2.Version != s1.Version {
		t.Fatalf("second init: %+v, %v; want unchanged %+v", s2, err, s1)
	}
	mustFollowFence(t, a, "fence after init", s1.Fence, mustAcquire(t, a).Fence)
}

func testDestroyAndRecreateNeverLowersFence(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	store := newStore(t)
	a := newContender(t, store, Namespace(t), "a")
	var last uint64
	for range 5 {
		last = mustAcquire(t, a).Fence
	}
	if err := a.e.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.e.Destroy(ctx); err != nil {
		t.Fatalf("destroying a missing election: %v", err)
	}
	if snap, err := a.e.Inspect(ctx); err != nil || snap.Exists {
		t.Fatalf("inspect after destroy: %+v, %v", snap, err)
	}
	if _, err := a.e.Renew(ctx, last); !errors.Is(err, lease.ErrNotHolder) {
		t.Fatalf("renew after destroy: %v, want ErrNotHolder", err)
	}
	a.clock.Advance(time.Millisecond)
	if g := mustAcquire(t, a); g.Fence <= last {
		t.Fatalf("fence after re-creation = %d, not above %d", g.Fence, last)
	}
}

func testNotifiesWrites(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	store := newStore(t)
	n, ok := store.(lease.Notifier)
	if !ok {
		t.Fatalf("%s does not implement lease.Notifier", store.Describe())
	}
	ns := Namespace(t)
	a := newContender(t, store, ns, "a")
	if _, err := a.e.Init(ctx); err != nil {
		t.Fatal(err)
	}
	nctx, cancel := context.WithCancel(ctx)
	ch, err := n.Notify(nctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	// Drain what subscribing itself may have signalled, then write.
	select {
	case <-ch:
	case <-time.After(100 * time.Millisecond):
	}
	g := mustAcquire(t, a)
	select {
	case <-ch:
	case <-time.After(2 * time.Second):
		t.Fatal("no notification within 2 s of an acquisition")
	}
	if err := a.e.Release(ctx, g.Fence); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(2 * time.Second):
		t.Fatal("no notification within 2 s of a release")
	}
	cancel()
	for range ch { // closed once the context ends
	}
}

func testConcurrentAcquireHasOneWinner(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	store := newStore(t)
	ns := Namespace(t)
	const n = 6
	results := make(chan lease.TryAcquireResult, n)
	errs := make(chan error, n)
	for i := range n {
		c := newContender(t, store, ns, fmt.Sprintf("c%d", i), lease.WithMaxCASRetries(50))
		go func() {
			res, err := c.e.TryAcquire(ctx)
			results <- res
			errs <- err
		}()
	}
	winners := 0
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		if (<-results).Acquired {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("%d contenders won at once, want exactly 1", winners)
	}
}
