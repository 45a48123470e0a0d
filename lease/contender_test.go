package lease_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
)

// These tests run contenders on real timers with short TTLs; every wait is bounded.

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func contender(t *testing.T, store lease.Store, holder string, ttl time.Duration) *lease.Contender {
	t.Helper()
	e, err := lease.New(store, "jobs", lease.Identity{HolderID: holder}, lease.WithTTL(ttl), lease.WithMaxClockSkew(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return &lease.Contender{Election: e, PollInterval: 50 * time.Millisecond, Logger: quiet}
}

// within waits for ch or fails after d.
func within[T any](t *testing.T, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("timed out after %v waiting for %s", d, what)
		var zero T
		return zero
	}
}

// termsLed returns a lead function that sends each term it is given on terms and leads until
// the term ends.
func termsLed() (terms chan *lease.Term, lead func(*lease.Term) error) {
	terms = make(chan *lease.Term, 4)
	return terms, func(term *lease.Term) error {
		terms <- term
		<-term.Done()
		return nil
	}
}

func TestContenderHandsOverWhenTheLeaderStops(t *testing.T) {
	store := memstore.New()
	terms, lead := termsLed()
	ctxA, stopA := context.WithCancel(context.Background())
	doneA := make(chan error, 1)
	go func() { doneA <- contender(t, store, "a", time.Second).Run(ctxA, lead) }()
	first := within(t, terms, 2*time.Second, "a's term")

	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	doneB := make(chan error, 1)
	go func() { doneB <- contender(t, store, "b", time.Second).Run(ctxB, lead) }()

	stopA()
	if !errors.Is(within(t, doneA, 2*time.Second, "a to stop"), nil) {
		t.Fatal("a's contender returned an error")
	}
	handedOver := time.Now()
	second := within(t, terms, 2*time.Second, "b's term")
	if second.Grant.HolderID != "b" || second.Grant.Fence != first.Grant.Fence+1 {
		t.Fatalf("second term %+v after %+v", second.Grant, first.Grant)
	}
	// Notified of the release, b does not wait for the TTL.
	if d := time.Since(handedOver); d > 500*time.Millisecond {
		t.Fatalf("handover took %v", d)
	}
	if !errors.Is(first.Cause(), context.Canceled) {
		t.Fatalf("a's term ended with %v, want the contender's cancellation", first.Cause())
	}
	stopB()
	within(t, doneB, 2*time.Second, "b to stop")
}

// failingStore fails every update after the first n (allowed) with ErrUnavailable.
type failingStore struct {
	lease.Store
	allowed atomic.Int64
}

func (s *failingStore) Update(ctx context.Context, rec lease.Record, v lease.Version) (lease.Version, error) {
	if s.allowed.Add(-1) < 0 {
		return 0, lease.ErrUnavailable
	}
	return s.Store.Update(ctx, rec, v)
}

func TestContenderTermEndsAtDeadlineWhenRenewalsFail(t *testing.T) {
	store := &failingStore{Store: memstore.New()}
	store.allowed.Store(0) // the acquisition creates the election; every renewal (an update) fails
	c := contender(t, store, "a", 3*time.Second)
	c.StopBefore = 600 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := make(chan time.Duration, 1)
	began := time.Now() // before the acquisition's write, from which the deadline counts
	go c.Run(ctx, func(term *lease.Term) error {
		<-term.Done()
		if errors.Is(term.Cause(), lease.ErrDeadline) {
			ended <- time.Since(began)
		}
		cancel()
		return nil
	})
	took := within(t, ended, 5*time.Second, "the term to end by its deadline")
	// TTL 3 s − margin 300 ms − StopBefore 600 ms = 2.1 s after the acquisition's write began,
	// plus the timer's latency: never sooner; and well before 2.4 s, where a deadline without
	// StopBefore (2.7 s) or without the margin (2.4 s) would fall.
	if took < 2100*time.Millisecond || took >= 2400*time.Millisecond {
		t.Fatalf("term ended %v after the contender began, want 2.1 s (and under 2.4 s)", took)
	}
}

func TestContenderDetectsAnotherHolderPromptly(t *testing.T) {
	store := memstore.New()
	c := contender(t, store, "a", 2*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	terms := make(chan *lease.Term, 4)
	go c.Run(ctx, func(term *lease.Term) error {
		terms <- term
		<-term.Done()
		cancel()
		return nil
	})
	term := within(t, terms, 2*time.Second, "the term")
	// Another contender takes the live term over, its holder proven gone.
	other, err := lease.New(store, "jobs", lease.Identity{HolderID: "b"}, lease.WithTTL(2*time.Second), lease.WithWitness(provesGone{}))
	if err != nil {
		t.Fatal(err)
	}
	taken := time.Now()
	if res, err := other.TryAcquire(context.Background()); err != nil || !res.Acquired || res.Evidence == "" {
		t.Fatal(res, err)
	}
	within(t, term.Done(), time.Second, "the superseded term to end")
	if !errors.Is(term.Cause(), lease.ErrLost) {
		t.Fatalf("cause %v, want ErrLost", term.Cause())
	}
	if d := time.Since(taken); d > 300*time.Millisecond {
		t.Fatalf("noticed after %v", d)
	}
}

// provesGone is a Witness that proves every holder gone.
type provesGone struct{}

func (provesGone) Gone(context.Context, lease.Record) (string, time.Duration) { return "test: gone", 0 }

func TestContenderValidatesTiming(t *testing.T) {
	c := contender(t, memstore.New(), "a", time.Second)
	c.StopBefore = 800 * time.Millisecond // + TTL/3 renew interval > TTL − margin
	err := c.Run(context.Background(), func(*lease.Term) error { return nil })
	if err == nil {
		t.Fatal("Run accepted a stop time that leaves no room to renew")
	}
}

// cancelOnWinStore cancels the contender right after the write that wins the election.
type cancelOnWinStore struct {
	lease.Store
	cancel context.CancelFunc
}

func (s *cancelOnWinStore) Create(ctx context.Context, rec lease.Record) (lease.Version, error) {
	v, err := s.Store.Create(ctx, rec)
	s.cancel()
	return v, err
}

func TestContenderReleasesATermWonWhileShuttingDown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	store := &cancelOnWinStore{Store: memstore.New(), cancel: cancel}
	c := contender(t, store, "a", time.Second)
	led := false
	if err := c.Run(ctx, func(*lease.Term) error { led = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if led {
		t.Fatal("a term ran after the contender was cancelled")
	}
	snap, err := c.Election.Inspect(context.Background())
	if err != nil || snap.Held() {
		t.Fatalf("after shutdown the lease is %+v (%v); want released", snap.Record, err)
	}
}

// TestContenderFollowerWakesAtOnceOnRelease: a follower that has been idle reads as soon as the
// store notifies a release — well within minWakeSpacing (50 ms), which it once slept after every
// notification — and not at its poll or the lease's expiry, both far off here.
func TestContenderFollowerWakesAtOnceOnRelease(t *testing.T) {
	soonest(t, 40*time.Millisecond, func() time.Duration { return followerHandover(t, nil) })
}

// TestContenderFollowerWakesAtOnceOnReleaseAfterRenewal: a release that the store notifies right
// after a renewal — the follower woke for the renewal a moment ago — is read at once too, not
// after the rest of minWakeSpacing (50 ms).
func TestContenderFollowerWakesAtOnceOnReleaseAfterRenewal(t *testing.T) {
	soonest(t, 30*time.Millisecond, func() time.Duration {
		return followerHandover(t, func(a *lease.Contender, first *lease.Term, seen <-chan time.Time) {
			// A renewal that b reads (its wake starts the spacing), then at once the release.
			renewed, err := a.Election.Renew(context.Background(), first.Grant.Fence)
			if err != nil {
				t.Fatal(err)
			}
			for !within(t, seen, 2*time.Second, "b to read a's renewal").Equal(renewed.RenewedAt) {
			}
		})
	})
}

// soonest runs a handover up to five times until one takes less than bound, and fails with
// every time taken when none does. The wake spacing these tests guard against delays every
// handover by 50 ms; a loaded machine delays only some.
func soonest(t *testing.T, bound time.Duration, handover func() time.Duration) {
	t.Helper()
	var took []time.Duration
	for range 5 {
		d := handover()
		if d < bound {
			return
		}
		took = append(took, d)
	}
	t.Fatalf("b's term began %v after the release in five tries, want within %v once", took, bound)
}

// followerHandover runs holder a and follower b, both polling only every 10 s, calls
// beforeRelease (if set) once b has read a's term — seen has the renewal time of every record
// of a that b reads — then stops a, and returns how long after a's release b's term began.
func followerHandover(t *testing.T, beforeRelease func(a *lease.Contender, first *lease.Term, seen <-chan time.Time)) time.Duration {
	t.Helper()
	store := memstore.New()
	terms, lead := termsLed()
	slow := func(holder string) *lease.Contender {
		c := contender(t, store, holder, 30*time.Second)
		c.PollInterval = 10 * time.Second
		return c
	}
	a := slow("a")
	ctxA, stopA := context.WithCancel(context.Background())
	defer stopA()
	doneA := make(chan error, 1)
	go func() { doneA <- a.Run(ctxA, lead) }()
	first := within(t, terms, 2*time.Second, "a's term")

	b := slow("b")
	seen := make(chan time.Time, 64)
	b.OnState = func(s lease.Snapshot) {
		if s.HolderID == "a" {
			select {
			case seen <- s.RenewedAt:
			default:
			}
		}
	}
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	doneB := make(chan error, 1)
	go func() { doneB <- b.Run(ctxB, lead) }()
	within(t, seen, 2*time.Second, "b to see a holding the lease")
	if beforeRelease != nil {
		beforeRelease(a, first, seen)
	}

	stopA()
	within(t, doneA, 2*time.Second, "a to release and stop")
	released := time.Now()
	second := within(t, terms, 2*time.Second, "b's term")
	took := time.Since(released)
	if second.Grant.HolderID != "b" {
		t.Fatalf("%s's term followed a's, want b's", second.Grant.HolderID)
	}
	stopB()
	within(t, doneB, 2*time.Second, "b to stop")
	return took
}

// TestContenderFollowsTheHolderFoundAfterAnUnsettledWrite: when the contender's acquisition may
// have landed but another contender holds the lease by the retry's read, the contender follows
// that holder at once (it reports it and waits on it), instead of treating the attempt as a
// store failure and sleeping a whole poll interval.
func TestContenderFollowsTheHolderFoundAfterAnUnsettledWrite(t *testing.T) {
	store := &leasetest.UnsettledStore{Store: memstore.New()}
	c := contender(t, store, "a", 2*time.Second)
	c.PollInterval = time.Hour
	states := make(chan lease.Snapshot, 16)
	c.OnState = func(s lease.Snapshot) { states <- s }
	// b's clock is an hour ahead: it finds a's fresh lease long expired and takes over before a
	// reads its write back.
	b, err := lease.New(store, "jobs", lease.Identity{HolderID: "b"}, lease.WithTTL(2*time.Second),
		lease.WithClock(leasetest.NewFakeClock(time.Now().Add(time.Hour))))
	if err != nil {
		t.Fatal(err)
	}
	store.Arm(leasetest.LandsAtOnce, func() {
		if res, err := b.TryAcquire(context.Background()); err != nil || !res.Acquired {
			t.Errorf("b's takeover: %+v, %v", res, err)
		}
	}, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- c.Run(ctx, func(*lease.Term) error { t.Error("a led a term"); return nil })
	}()
	for {
		s := within(t, states, 2*time.Second, "the contender to report b as the holder")
		if s.HolderID == "b" {
			break
		}
	}
	cancel()
	if err := within(t, done, 2*time.Second, "the contender to stop"); err != nil {
		t.Fatal(err)
	}
}

// slowCreateStore delays the write that creates the election: a first acquisition whose write
// blocked, as a Swarm write does while the Raft leader changes.
type slowCreateStore struct {
	lease.Store
	delay   time.Duration
	renewed chan struct{}
}

func (s *slowCreateStore) Create(ctx context.Context, rec lease.Record) (lease.Version, error) {
	time.Sleep(s.delay) // the fault: a write that takes this long, not a synchronisation
	return s.Store.Create(ctx, rec)
}

func (s *slowCreateStore) Update(ctx context.Context, rec lease.Record, v lease.Version) (lease.Version, error) {
	ver, err := s.Store.Update(ctx, rec, v)
	if err == nil {
		select {
		case s.renewed <- struct{}{}:
		default:
		}
	}
	return ver, err
}

// TestContenderRenewsBeforeADeadlineNearerThanTheRenewInterval: an acquisition whose write took
// 4 s of a 6 s TTL leaves 1.4 s of term (TTL − margin − 4 s), less than the 2 s renew interval:
// the leader renews within what is left (after 0.7 s) instead of letting the term end
// unrenewed.
func TestContenderRenewsBeforeADeadlineNearerThanTheRenewInterval(t *testing.T) {
	store := &slowCreateStore{Store: memstore.New(), delay: 4 * time.Second, renewed: make(chan struct{}, 1)}
	c := contender(t, store, "a", 6*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	terms, lead := termsLed()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, lead) }()
	term := within(t, terms, 10*time.Second, "the term")
	within(t, store.renewed, 4*time.Second, "the first renewal")
	select {
	case <-term.Done():
		t.Fatalf("the term ended (%v) before its first renewal could move the deadline", term.Cause())
	default:
	}
	cancel()
	if err := within(t, done, 5*time.Second, "the contender to stop"); err != nil {
		t.Fatal(err)
	}
}

// TestContendersSharingAnIdentityDoNotFlap: two contenders with one identity (a misconfiguration)
// are two incarnations: neither takes the other's live term, so they do not take the lease from
// each other. The one that follows sees the other's term renewed under its own identity, and
// says so in an error naming the identity and the fix.
func TestContendersSharingAnIdentityDoNotFlap(t *testing.T) {
	store := memstore.New()
	var terms atomic.Int64
	lead := func(term *lease.Term) error {
		terms.Add(1)
		<-term.Done()
		return nil
	}
	var logs leasetest.SyncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 2)
	for i := 0; i < 2; i++ {
		c := contender(t, store, "twin", 500*time.Millisecond)
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		go func() { done <- c.Run(ctx, lead) }()
	}
	// Over eight TTLs, with a poll every 50 ms: flapping would be tens of terms.
	time.Sleep(4 * time.Second) // the span over which terms are counted, not synchronisation
	cancel()
	within(t, done, 2*time.Second, "a contender to stop")
	within(t, done, 2*time.Second, "the other contender to stop")
	if n := terms.Load(); n != 1 {
		t.Fatalf("%d terms in 4 s between two contenders of one identity, want the first one kept", n)
	}
	if out := logs.String(); !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "holder_id=twin") || !strings.Contains(out, "own holder id") {
		t.Fatalf("no error naming the shared holder id and the fix:\n%s", out)
	}
}

// TestATermTakenByATwinEndsWithErrIdentityInUse: a term under this contender's identity that
// another incarnation took (its witness proved this holder gone — wrongly, or it ran on) ends
// the contender's term with a cause wrapping ErrLost and ErrIdentityInUse, and is not taken back.
func TestATermTakenByATwinEndsWithErrIdentityInUse(t *testing.T) {
	store := memstore.New()
	c := contender(t, store, "twin", 2*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	terms, lead := termsLed()
	go c.Run(ctx, lead)
	term := within(t, terms, 2*time.Second, "the term")
	twin, err := lease.New(store, "jobs", lease.Identity{HolderID: "twin"}, lease.WithTTL(2*time.Second),
		lease.WithIncarnation(lease.Incarnation{ID: "the-twin"}), lease.WithWitness(provesGone{}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := twin.TryAcquire(context.Background())
	if err != nil || !res.Acquired {
		t.Fatal(res, err)
	}
	within(t, term.Done(), time.Second, "the term to end")
	if cause := term.Cause(); !errors.Is(cause, lease.ErrIdentityInUse) || !errors.Is(cause, lease.ErrLost) {
		t.Fatalf("cause %v, want ErrLost and ErrIdentityInUse", cause)
	}
	select {
	case next := <-terms:
		t.Fatalf("the contender took the twin's live term back (fence %d)", next.Grant.Fence)
	case <-time.After(500 * time.Millisecond): // ten polls: the span in which a take-back would show
	}
}

// TestContenderWaitsOutATermWhoseElectionVanished: an election destroyed under a live term (or a
// file store's directory removed) leaves its holder at work until its next renewal fails. A
// follower that saw that term held must not start a new incarnation beside it: it takes the
// absence for the term until the term expires, and the new fences start above it.
func TestContenderWaitsOutATermWhoseElectionVanished(t *testing.T) {
	store := memstore.New()
	ttl := time.Second
	ctxA, stopA := context.WithCancel(context.Background())
	defer stopA()
	aTerms := make(chan *lease.Term, 1)
	aDone := make(chan error, 1)
	go func() {
		aDone <- contender(t, store, "a", ttl).Run(ctxA, func(term *lease.Term) error { aTerms <- term; <-term.Done(); return nil })
	}()
	first := within(t, aTerms, 2*time.Second, "a's term")

	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	bTerms := make(chan *lease.Term, 1)
	b := contender(t, store, "b", ttl)
	bSaw := make(chan struct{}, 1)
	b.OnState = func(s lease.Snapshot) {
		if s.HolderID == "a" {
			select {
			case bSaw <- struct{}{}:
			default:
			}
		}
	}
	go func() {
		_ = b.Run(ctxB, func(term *lease.Term) error { bTerms <- term; <-term.Done(); return nil })
	}()
	within(t, bSaw, 2*time.Second, "b to read a's term")

	// The election vanishes; a goes on working, but can no longer write (it stops contending),
	// as a holder between two renewals that then dies would. a's term runs until a TTL after
	// its last write, which is this one or a later one: b may start none before its expiry.
	// (Not before a TTL after the vanishing, as a holder renewing on time would give: under
	// load a's renewals come late, and an unchanged term is rightly taken for expired sooner.)
	last, _, err := store.Load(context.Background(), "jobs")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Delete(context.Background(), "jobs"); err != nil {
		t.Fatal(err)
	}
	stopA()
	within(t, aDone, 2*time.Second, "a to stop")
	term := within(t, bTerms, 3*ttl, "b's term after a's expired")
	if started := term.Grant.Record.AcquiredAt; started.Before(last.ExpiresAt) {
		t.Fatalf("b started a term at %v, inside a's term, which ran until %v (TTL %v)", started, last.ExpiresAt, ttl)
	}
	if term.Grant.Fence <= first.Grant.Fence {
		t.Fatalf("b's fence %d is not above a's %d", term.Grant.Fence, first.Grant.Fence)
	}
}

// TestContendersSharingAnIdentityBothKnowIt: the contender that takes a term over must learn of
// the clash too, not only the one that loses it — else a twin whose work keeps ending (its
// command exits, it steps down) takes every live term of the other back the moment it looks.
func TestContendersSharingAnIdentityBothKnowIt(t *testing.T) {
	store := memstore.New()
	var terms atomic.Int64
	var logs leasetest.SyncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 2)
	holds := func(term *lease.Term) error { terms.Add(1); <-term.Done(); return nil }
	stepsDown := func(term *lease.Term) error { terms.Add(1); return nil } // its work ends at once
	for _, lead := range []func(*lease.Term) error{holds, stepsDown} {
		c := contender(t, store, "twin", 500*time.Millisecond)
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		go func() { done <- c.Run(ctx, lead) }()
	}
	time.Sleep(3 * time.Second) // the span over which terms are counted, not synchronisation
	cancel()
	within(t, done, 2*time.Second, "a contender to stop")
	within(t, done, 2*time.Second, "the other contender to stop")
	// The one that steps down gives the term back; once the other holds, it must not take it.
	if n := terms.Load(); n > 6 {
		t.Fatalf("%d terms in 3 s between two contenders of one identity: one takes the other's terms back", n)
	}
	if !strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("no error naming the shared identity:\n%s", logs.String())
	}
}

// stuckStore answers nothing while stuck is set: a request then waits for its context to end,
// and sends how long it had on waits (-1 without a deadline).
type stuckStore struct {
	lease.Store
	stuck atomic.Bool
	waits chan time.Duration
	// reroutes: the store sends an unanswered request to another member (lease.Rerouter).
	reroutes bool
}

func (s *stuckStore) Reroutes() bool { return s.reroutes }

func (s *stuckStore) wait(ctx context.Context) error {
	had := time.Duration(-1)
	if deadline, ok := ctx.Deadline(); ok {
		had = time.Until(deadline)
	}
	s.waits <- had
	<-ctx.Done()
	return ctx.Err()
}

func (s *stuckStore) Load(ctx context.Context, ns string) (lease.Record, lease.Version, error) {
	if s.stuck.Load() {
		return lease.Record{}, 0, s.wait(ctx)
	}
	return s.Store.Load(ctx, ns)
}

func (s *stuckStore) Update(ctx context.Context, rec lease.Record, v lease.Version) (lease.Version, error) {
	if s.stuck.Load() {
		return 0, s.wait(ctx)
	}
	return s.Store.Update(ctx, rec, v)
}

// TestContenderStepDownEndsByTheTermsDeadline: a leader that steps down while its store answers
// nothing gives up releasing by its term's deadline — the lease is the followers' soon after —
// and not a fixed while later.
func TestContenderStepDownEndsByTheTermsDeadline(t *testing.T) {
	const ttl = 2 * time.Second
	store := &stuckStore{Store: memstore.New(), waits: make(chan time.Duration, 64)}
	c := contender(t, store, "a", ttl)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- c.Run(ctx, func(term *lease.Term) error {
			store.stuck.Store(true)
			cancel()
			return nil
		})
	}()
	had := within(t, store.waits, 2*time.Second, "the release")
	if had < 0 || had > ttl {
		t.Fatalf("the release after the term had %v to wait, want at most what was left of the %v term", had, ttl)
	}
	within(t, done, ttl+time.Second, "the contender to return")
}

// TestContenderCampaignIsSentAgain: on a store that sends an unanswered request to another
// member, a follower's campaign that gets no answer is given up after about a poll interval (at
// least a second) and sent again, not left waiting; on one that does not (Swarm, whose write may
// block 20 s and still commit), it takes the time its store takes.
func TestContenderCampaignIsSentAgain(t *testing.T) {
	for _, reroutes := range []bool{true, false} {
		store := &stuckStore{Store: memstore.New(), waits: make(chan time.Duration, 64), reroutes: reroutes}
		store.stuck.Store(true)
		c := contender(t, store, "b", time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = c.Run(ctx, func(*lease.Term) error { return nil }) }()
		if !reroutes {
			if had := within(t, store.waits, 2*time.Second, "a campaign's read"); had >= 0 {
				t.Errorf("without rerouting, the campaign's read had %v to wait, want no bound of the contender's", had)
			}
			select {
			case <-store.waits:
				t.Errorf("without rerouting, a second campaign while the first waits")
			case <-time.After(1500 * time.Millisecond): // beyond the bound a rerouting store gets
			}
			cancel()
			continue
		}
		for i := range 3 {
			had := within(t, store.waits, 2*time.Second, "a campaign's read")
			if had < 0 || had > time.Second {
				t.Fatalf("campaign %d's read had %v to wait, want at most a second (poll interval %v)", i, had, c.PollInterval)
			}
		}
		cancel()
	}
}
