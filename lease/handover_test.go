package lease_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
)

// writeCounter counts the writes made through it: creates, updates and handovers.
type writeCounter struct {
	*memstore.Store
	writes atomic.Int64
}

func (s *writeCounter) Create(ctx context.Context, rec lease.Record) (lease.Version, error) {
	s.writes.Add(1)
	return s.Store.Create(ctx, rec)
}

func (s *writeCounter) Update(ctx context.Context, rec lease.Record, v lease.Version) (lease.Version, error) {
	s.writes.Add(1)
	return s.Store.Update(ctx, rec, v)
}

func (s *writeCounter) HandOver(ctx context.Context, rec lease.Record, v lease.Version, to lease.Successor) (lease.Version, error) {
	s.writes.Add(1)
	return s.Store.HandOver(ctx, rec, v, to)
}

// handoverTTL is the TTL of the handover tests' contenders.
const handoverTTL = 3 * time.Second

// handoverPair is a holder a and a registered successor b, each on a store handle that counts
// its writes and on a clock of its own.
type handoverPair struct {
	a, b           *lease.Election
	storeA, storeB *writeCounter
	clockA, clockB *leasetest.FakeClock
	toB            lease.Successor
}

func newHandoverPair(t *testing.T) *handoverPair {
	t.Helper()
	mem := memstore.New()
	start := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	p := &handoverPair{storeA: &writeCounter{Store: mem}, storeB: &writeCounter{Store: mem},
		clockA: leasetest.NewFakeClock(start), clockB: leasetest.NewFakeClock(start)}
	var err error
	if p.a, err = lease.New(p.storeA, "jobs", lease.Identity{HolderID: "a"}, lease.WithTTL(handoverTTL), lease.WithClock(p.clockA)); err != nil {
		t.Fatal(err)
	}
	if p.b, err = lease.New(p.storeB, "jobs", lease.Identity{HolderID: "b"}, lease.WithTTL(handoverTTL), lease.WithClock(p.clockB)); err != nil {
		t.Fatal(err)
	}
	p.toB = lease.Successor{Identity: lease.Identity{HolderID: "b"}, TTL: handoverTTL, Token: lease.NewSuccessorToken()}
	p.b.SetSuccessorToken(p.toB.Token, 0)
	ctx, cancel := context.WithCancel(context.Background())
	registered := make(chan error, 1)
	go func() { registered <- mem.RegisterSuccessor(ctx, "jobs", p.toB) }()
	t.Cleanup(func() { cancel(); <-registered })
	awaitSuccessors(t, mem, 1, "b's registration")
	return p
}

// awaitSuccessors waits until mem lists n successors of the election "jobs", and returns them.
func awaitSuccessors(t *testing.T, mem *memstore.Store, n int, what string) []lease.Successor {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if list, _ := mem.Successors(context.Background(), "jobs"); len(list) == n {
			return list
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: never %d registered successors", what, n)
		}
	}
}

// advance moves both contenders' clocks.
func (p *handoverPair) advance(d time.Duration) {
	p.clockA.Advance(d)
	p.clockB.Advance(d)
}

// lead makes a the holder, and b a follower that has read a's term.
func (p *handoverPair) lead(t *testing.T) (aTerm lease.Grant, bRead time.Duration) {
	t.Helper()
	res, err := p.a.TryAcquire(context.Background())
	if err != nil || !res.Acquired {
		t.Fatalf("a's acquisition: %+v, %v", res, err)
	}
	bRead = p.clockB.Monotonic()
	if res, err := p.b.TryAcquire(context.Background()); err != nil || res.Acquired {
		t.Fatalf("b's campaign while a holds: %+v, %v", res, err)
	}
	return res.Grant, bRead
}

// TestAHandoverIsOneWrite: the holder's handover is the only write between its term and the
// successor's; the successor's term starts on a read, with the next fence, and its deadline
// counts from its read of the term the handover replaced — not from the handover, which it did
// not see begin.
func TestAHandoverIsOneWrite(t *testing.T) {
	p := newHandoverPair(t)
	ctx := context.Background()
	aTerm, bRead := p.lead(t)
	p.advance(time.Second)
	writesBefore := p.storeA.writes.Load() + p.storeB.writes.Load()
	if err := p.a.HandOver(ctx, aTerm.Fence, p.toB); err != nil {
		t.Fatal(err)
	}
	p.advance(100 * time.Millisecond)
	res, err := p.b.TryAcquire(ctx)
	if err != nil || !res.Acquired {
		t.Fatalf("b after the handover: %+v, %v", res, err)
	}
	if n := p.storeA.writes.Load() + p.storeB.writes.Load() - writesBefore; n != 1 {
		t.Errorf("%d writes from a's term to b's; want 1, the handover", n)
	}
	g := res.Grant
	if g.HolderID != "b" || g.Fence <= aTerm.Fence || g.TTL != handoverTTL {
		t.Errorf("b's grant %+v after a's fence %d", g.Record, aTerm.Fence)
	}
	if want := bRead + handoverTTL - lease.SafetyMargin(handoverTTL); g.Deadline != want {
		t.Errorf("b's deadline %v; want its read's start %v + TTL - margin = %v", g.Deadline, bRead, want)
	}
	// a is no longer the holder, and knows it without another write.
	if err := p.a.Release(ctx, aTerm.Fence); !errors.Is(err, lease.ErrNotHolder) {
		t.Errorf("a's release after handing over: %v, want ErrNotHolder", err)
	}
	// b's first renewal is one conditional write and makes the term its own.
	writesBefore = p.storeB.writes.Load()
	renewed, err := p.b.Renew(ctx, g.Fence)
	if err != nil {
		t.Fatal(err)
	}
	if n := p.storeB.writes.Load() - writesBefore; n != 1 {
		t.Errorf("b's first renewal took %d writes; want 1", n)
	}
	if renewed.Handover != (lease.Handover{}) || renewed.Deadline != p.clockB.Monotonic()+handoverTTL-lease.SafetyMargin(handoverTTL) {
		t.Errorf("b's renewal %+v, deadline %v", renewed.Record, renewed.Deadline)
	}
}

// TestAHandoverOfATermTheSuccessorDidNotReadIsAcquiredByAWrite: the holder renewed after the
// successor's last read, so the successor knows no moment before the handover; it takes the
// term with a write of its own, whose start dates its deadline, and a fence above the handed one.
func TestAHandoverOfATermTheSuccessorDidNotReadIsAcquiredByAWrite(t *testing.T) {
	p := newHandoverPair(t)
	ctx := context.Background()
	aTerm, _ := p.lead(t)
	p.advance(time.Second)
	if _, err := p.a.Renew(ctx, aTerm.Fence); err != nil {
		t.Fatal(err)
	}
	if err := p.a.HandOver(ctx, aTerm.Fence, p.toB); err != nil {
		t.Fatal(err)
	}
	handed, _, err := p.storeB.Load(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	p.advance(100 * time.Millisecond)
	writesBefore := p.storeB.writes.Load()
	start := p.clockB.Monotonic()
	res, err := p.b.TryAcquire(ctx)
	if err != nil || !res.Acquired {
		t.Fatalf("b after the handover: %+v, %v", res, err)
	}
	if n := p.storeB.writes.Load() - writesBefore; n != 1 {
		t.Errorf("b acquired with %d writes; want 1 of its own", n)
	}
	if res.Grant.Fence <= handed.Fence || res.Grant.Handover != (lease.Handover{}) {
		t.Errorf("b's grant %+v; want a fence above the handed %d, no handover mark", res.Grant.Record, handed.Fence)
	}
	if want := start + handoverTTL - lease.SafetyMargin(handoverTTL); res.Grant.Deadline != want {
		t.Errorf("b's deadline %v; want its write's start + TTL - margin = %v", res.Grant.Deadline, want)
	}
}

// TestAHandedTermEndsByTheRecordsExpiry: the holder's wall clock is behind, so the record it
// writes expires before the successor's read + TTL; the successor's deadline keeps within the
// record's expiry (others take over by it), and a handed term with less than a third of its TTL
// left is not taken without a write.
func TestAHandedTermEndsByTheRecordsExpiry(t *testing.T) {
	p := newHandoverPair(t)
	ctx := context.Background()
	p.clockA.JumpWall(-time.Second)
	aTerm, _ := p.lead(t)
	p.advance(500 * time.Millisecond)
	if err := p.a.HandOver(ctx, aTerm.Fence, p.toB); err != nil {
		t.Fatal(err)
	}
	res, err := p.b.TryAcquire(ctx)
	if err != nil || !res.Acquired {
		t.Fatalf("b after the handover: %+v, %v", res, err)
	}
	// The record expires at a's wall + TTL = b's wall - 1 s + TTL.
	if want := p.clockB.Monotonic() - time.Second + handoverTTL - lease.SafetyMargin(handoverTTL); res.Grant.Deadline != want {
		t.Errorf("b's deadline %v; want the record's expiry on b's clock, less the margin: %v", res.Grant.Deadline, want)
	}

	// Far behind: the handed term is nearly over by b's clock, so b writes its own.
	q := newHandoverPair(t)
	q.clockA.JumpWall(-2 * time.Second)
	aTerm, _ = q.lead(t)
	if err := q.a.HandOver(ctx, aTerm.Fence, q.toB); err != nil {
		t.Fatal(err)
	}
	writesBefore := q.storeB.writes.Load()
	if res, err := q.b.TryAcquire(ctx); err != nil || !res.Acquired || q.storeB.writes.Load() != writesBefore+1 {
		t.Fatalf("b after a handover with a third of the TTL left: %+v, %v, %d writes", res, err, q.storeB.writes.Load()-writesBefore)
	}
}

// TestAHandoverIsTakenOnlyByItsRegistration: another process under the successor's identity
// (another token) neither takes the handed term without a write nor takes it over as its own.
func TestAHandoverIsTakenOnlyByItsRegistration(t *testing.T) {
	p := newHandoverPair(t)
	ctx := context.Background()
	twin, err := lease.New(p.storeB, "jobs", lease.Identity{HolderID: "b"}, lease.WithTTL(handoverTTL), lease.WithClock(p.clockB))
	if err != nil {
		t.Fatal(err)
	}
	twin.SetSuccessorToken(lease.NewSuccessorToken(), 0)
	aTerm, _ := p.lead(t)
	if _, err := twin.TryAcquire(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.a.HandOver(ctx, aTerm.Fence, p.toB); err != nil {
		t.Fatal(err)
	}
	writesBefore := p.storeB.writes.Load()
	res, err := twin.TryAcquire(ctx)
	if err != nil || res.Acquired || res.Current.HolderID != "b" || !res.Current.Acquired {
		t.Fatalf("the twin after a handover to b: %+v, %v; want it following b's live term", res, err)
	}
	if n := p.storeB.writes.Load() - writesBefore; n != 0 {
		t.Errorf("the twin wrote %d times", n)
	}
}

// TestAHandoverNeedsARegisteredSuccessor: a successor whose registration ended is not handed
// the term; the holder's record stays as it was, so it can still release.
func TestAHandoverNeedsARegisteredSuccessor(t *testing.T) {
	p := newHandoverPair(t)
	ctx := context.Background()
	aTerm, _ := p.lead(t)
	gone := p.toB
	gone.Token = lease.NewSuccessorToken()
	if err := p.a.HandOver(ctx, aTerm.Fence, gone); !errors.Is(err, lease.ErrSuccessorGone) || !errors.Is(err, lease.ErrConflict) {
		t.Fatalf("a handover to an unregistered successor: %v, want ErrSuccessorGone (an ErrConflict)", err)
	}
	if err := p.a.Release(ctx, aTerm.Fence); err != nil {
		t.Fatalf("a's release after the refused handover: %v", err)
	}
}

// staleFeed is a store whose change feed (Notify, WatchedRecords) is the test's: it notifies
// only when the test delivers a record, and keeps delivering that record, as a watch that lags
// behind would. It counts the reads made through it.
type staleFeed struct {
	*memstore.Store
	mu     sync.Mutex
	rec    lease.Record
	ver    lease.Version
	notify chan struct{}
	loads  atomic.Int64
	// loadsAtDelivery is loads when the test delivered its record.
	loadsAtDelivery atomic.Int64
}

func newStaleFeed(mem *memstore.Store) *staleFeed {
	return &staleFeed{Store: mem, notify: make(chan struct{}, 1)}
}

func (s *staleFeed) Notify(context.Context, string) (<-chan struct{}, error) { return s.notify, nil }

func (s *staleFeed) Load(ctx context.Context, ns string) (lease.Record, lease.Version, error) {
	s.loads.Add(1)
	return s.Store.Load(ctx, ns)
}

func (s *staleFeed) Watched(string) (lease.Record, lease.Version, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec, s.ver, s.ver != 0
}

func (s *staleFeed) deliver(rec lease.Record, ver lease.Version) {
	s.mu.Lock()
	s.rec, s.ver = rec, ver
	s.mu.Unlock()
	lease.Signal(s.notify)
}

// leaderA makes "a" the holder of a fresh term on store, with ttl.
func leaderA(t *testing.T, store lease.Store, ttl time.Duration) (*lease.Election, lease.Grant) {
	t.Helper()
	a, err := lease.New(store, "jobs", lease.Identity{HolderID: "a"}, lease.WithTTL(ttl))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.TryAcquire(context.Background())
	if err != nil || !res.Acquired {
		t.Fatalf("a's acquisition: %+v, %v", res, err)
	}
	return a, res.Grant
}

// followA runs c, a contender that follows a's term, until the returned stop (or the test's
// end): it returns once c has read a's term and mem shows its registration.
func followA(t *testing.T, mem *memstore.Store, c *lease.Contender, lead func(*lease.Term) error) (to lease.Successor, stop func()) {
	t.Helper()
	following := make(chan struct{}, 1)
	onState := c.OnState
	c.OnState = func(s lease.Snapshot) {
		if s.HolderID == "a" {
			lease.Signal(following)
		}
		if onState != nil {
			onState(s)
		}
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx, lead) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := within(t, done, 5*time.Second, "the contender to stop"); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(stop)
	within(t, following, 5*time.Second, "the contender to read a's term")
	return awaitSuccessors(t, mem, 1, "the contender's registration")[0], stop
}

// handedTo starts a contender for b on feed, waits until it has read a's term and registered,
// hands a's term over to it and delivers the handed record on feed. lead runs b's terms.
func handedTo(t *testing.T, mem *memstore.Store, feed *staleFeed, ttl, poll time.Duration, lead func(*lease.Term) error) (handed lease.Record, to lease.Successor) {
	t.Helper()
	a, aTerm := leaderA(t, mem, ttl)
	b, err := lease.New(feed, "jobs", lease.Identity{HolderID: "b"}, lease.WithTTL(ttl))
	if err != nil {
		t.Fatal(err)
	}
	to, _ = followA(t, mem, &lease.Contender{Election: b, PollInterval: poll, Logger: quiet}, lead)
	handed = handOverAndDeliver(t, mem, feed, a, aTerm.Fence, to)
	return handed, to
}

// handOverAndDeliver hands a's term with fence over to to, and delivers the handed record on
// feed, as the change feed would; it returns that record.
func handOverAndDeliver(t *testing.T, mem *memstore.Store, feed *staleFeed, a *lease.Election, fence uint64, to lease.Successor) lease.Record {
	t.Helper()
	ctx := context.Background()
	if err := a.HandOver(ctx, fence, to); err != nil {
		t.Fatal(err)
	}
	handed, ver, err := mem.Load(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	feed.loadsAtDelivery.Store(feed.loads.Load())
	feed.deliver(handed, ver)
	return handed
}

// TestAWatchedHandoverStartsWithoutARead: the successor takes the handed term from its change
// feed alone — no read between the delivery and its term — with the handed fence. Its poll
// interval is long, so only the delivery wakes it.
func TestAWatchedHandoverStartsWithoutARead(t *testing.T) {
	mem := memstore.New()
	feed := newStaleFeed(mem)
	terms := make(chan lease.Grant, 1)
	var loadsAtTerm atomic.Int64
	handed, to := handedTo(t, mem, feed, 30*time.Second, time.Hour, func(term *lease.Term) error {
		loadsAtTerm.Store(feed.loads.Load())
		terms <- term.Grant
		<-term.Done()
		return nil
	})
	g := within(t, terms, 5*time.Second, "b's handed term")
	if g.Fence != handed.Fence || g.Handover.To != to.Token {
		t.Fatalf("b's term %+v; want the handed %+v", g.Record, handed)
	}
	if n := loadsAtTerm.Load() - feed.loadsAtDelivery.Load(); n != 0 {
		t.Errorf("b read %d times between the delivery and its term; want 0", n)
	}
}

// TestAWatchedHandoverIsTakenOnce: when a handed term has ended and the change feed still shows
// it, the successor does not take it again — its own release is newer — but campaigns, and its
// next term has a higher fence.
func TestAWatchedHandoverIsTakenOnce(t *testing.T) {
	mem := memstore.New()
	feed := newStaleFeed(mem)
	terms := make(chan lease.Grant, 2)
	var led atomic.Int32
	handed, to := handedTo(t, mem, feed, 3*time.Second, 50*time.Millisecond, func(term *lease.Term) error {
		terms <- term.Grant
		if led.Add(1) == 1 {
			return nil // the first term steps down at once
		}
		<-term.Done()
		return nil
	})
	first := within(t, terms, 5*time.Second, "b's handed term")
	if first.Fence != handed.Fence || first.Handover.To != to.Token {
		t.Fatalf("b's first term %+v; want the handed %+v", first.Record, handed)
	}
	second := within(t, terms, 5*time.Second, "b's next term")
	if second.Fence <= first.Fence || second.Handover != (lease.Handover{}) {
		t.Fatalf("b's next term %+v after the handed one (fence %d): the stale delivery was taken again", second.Record, first.Fence)
	}
}

// TestAWatchedHandoverToAnotherIsFollowedWithoutARead: a follower that is not the successor
// learns the handed term from its change feed alone — no read between the delivery and its
// report of the new holder — so that followers do not all send a request as the successor
// starts its work.
func TestAWatchedHandoverToAnotherIsFollowedWithoutARead(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	feed := newStaleFeed(mem)
	a, aTerm := leaderA(t, mem, 30*time.Second)
	c, err := lease.New(feed, "jobs", lease.Identity{HolderID: "c"}, lease.WithTTL(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	states := make(chan lease.Snapshot, 16)
	followA(t, mem, &lease.Contender{Election: c, PollInterval: time.Hour, Logger: quiet,
		OnState: func(s lease.Snapshot) { states <- s }}, func(*lease.Term) error { t.Error("c led"); return nil })
	regCtx, unregister := context.WithCancel(ctx)
	defer unregister()
	toB := lease.Successor{Identity: lease.Identity{HolderID: "b"}, TTL: 30 * time.Second, Token: lease.NewSuccessorToken()}
	go func() { _ = mem.RegisterSuccessor(regCtx, "jobs", toB) }()
	awaitSuccessors(t, mem, 2, "b's registration")
	handed := handOverAndDeliver(t, mem, feed, a, aTerm.Fence, toB)
	for {
		s := within(t, states, 5*time.Second, "c to report b's handed term")
		if s.HolderID != "b" {
			continue
		}
		if !s.Acquired || s.Fence != handed.Fence {
			t.Fatalf("c reported %+v; want b's live handed term %+v", s, handed)
		}
		break
	}
	if n := feed.loads.Load() - feed.loadsAtDelivery.Load(); n != 0 {
		t.Errorf("c read %d times between the delivery and its report; want 0", n)
	}
}

// registrationWitness records, at each handover, whether the leader's own successor
// registration was still in force: a leader told to stop removes it only after its handover.
type registrationWitness struct {
	*memstore.Store
	leader string
	mu     sync.Mutex
	reg    context.Context // the leader's registration's context
	// registeredAtHandover receives, at each handover, whether that registration was in force.
	registeredAtHandover chan bool
}

func (s *registrationWitness) RegisterSuccessor(ctx context.Context, ns string, su lease.Successor) error {
	if su.Identity.HolderID == s.leader {
		s.mu.Lock()
		s.reg = ctx
		s.mu.Unlock()
	}
	return s.Store.RegisterSuccessor(ctx, ns, su)
}

func (s *registrationWitness) HandOver(ctx context.Context, rec lease.Record, v lease.Version, to lease.Successor) (lease.Version, error) {
	s.mu.Lock()
	reg := s.reg
	s.mu.Unlock()
	s.registeredAtHandover <- reg != nil && reg.Err() == nil
	return s.Store.HandOver(ctx, rec, v, to)
}

// TestALeaderToldToStopHandsOverBeforeItUnregisters: the removal of a stopping leader's
// registration is a write of its own; made as the stop begins, it would compete with the
// handover's write. It comes after the handover.
func TestALeaderToldToStopHandsOverBeforeItUnregisters(t *testing.T) {
	mem := memstore.New()
	witness := &registrationWitness{Store: mem, leader: "a", registeredAtHandover: make(chan bool, 4)}
	elect := func(id string) *lease.Election {
		e, err := lease.New(witness, "jobs", lease.Identity{HolderID: id}, lease.WithTTL(30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	aCtx, stopA := context.WithCancel(context.Background())
	defer stopA()
	aLeads, aDone := make(chan struct{}, 1), make(chan error, 1)
	go func() {
		aDone <- (&lease.Contender{Election: elect("a"), PollInterval: 50 * time.Millisecond, Logger: quiet}).Run(aCtx, func(term *lease.Term) error {
			aLeads <- struct{}{}
			<-term.Done()
			return nil
		})
	}()
	within(t, aLeads, 5*time.Second, "a's term")
	bCtx, stopB := context.WithCancel(context.Background())
	defer stopB()
	bLeads, bDone := make(chan lease.Grant, 1), make(chan error, 1)
	go func() {
		bDone <- (&lease.Contender{Election: elect("b"), PollInterval: 50 * time.Millisecond, Logger: quiet}).Run(bCtx, func(term *lease.Term) error {
			bLeads <- term.Grant
			<-term.Done()
			return nil
		})
	}()
	awaitSuccessors(t, mem, 2, "a's and b's registrations")
	stopA()
	if !within(t, witness.registeredAtHandover, 5*time.Second, "a's handover") {
		t.Error("a's registration was gone when it handed over; want it removed after the handover")
	}
	if err := within(t, aDone, 5*time.Second, "a to stop"); err != nil {
		t.Fatal(err)
	}
	if g := within(t, bLeads, 5*time.Second, "b's handed term"); g.HolderID != "b" {
		t.Fatalf("b's term: %+v", g.Record)
	}
	awaitSuccessors(t, mem, 1, "a's registration gone once a has stopped")
	stopB()
	if err := within(t, bDone, 5*time.Second, "b to stop"); err != nil {
		t.Fatal(err)
	}
}

// ambiguousHandOver applies a handover (or not) and answers ErrAmbiguous either way.
type ambiguousHandOver struct {
	*memstore.Store
	apply bool
}

func (s *ambiguousHandOver) HandOver(ctx context.Context, rec lease.Record, v lease.Version, to lease.Successor) (lease.Version, error) {
	if s.apply {
		if _, err := s.Store.HandOver(ctx, rec, v, to); err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("connection lost: %w", lease.ErrAmbiguous)
}

// TestAnAmbiguousHandoverThenARelease: a handover whose answer was lost, followed by the release
// a Contender makes then: when the handover committed, the release is refused (ErrNotHolder) and
// the successor's term stands; when it did not, the release commits. Never both.
func TestAnAmbiguousHandoverThenARelease(t *testing.T) {
	for _, applied := range []bool{true, false} {
		p := newHandoverPair(t)
		ctx := context.Background()
		aTerm, _ := p.lead(t)
		amb := &ambiguousHandOver{Store: p.storeA.Store, apply: applied}
		a, err := lease.New(amb, "jobs", lease.Identity{HolderID: "a"}, lease.WithTTL(handoverTTL), lease.WithClock(p.clockA))
		if err != nil {
			t.Fatal(err)
		}
		// a's handle that made the term: the same identity, its last write read back.
		if _, err := a.Renew(ctx, aTerm.Fence); err != nil {
			t.Fatal(err)
		}
		if err := a.HandOver(ctx, aTerm.Fence, p.toB); !errors.Is(err, lease.ErrAmbiguous) {
			t.Fatalf("applied=%v: the handover answered %v, want ErrAmbiguous", applied, err)
		}
		err = a.Release(ctx, aTerm.Fence)
		rec, _, lerr := p.storeA.Load(ctx, "jobs")
		if lerr != nil {
			t.Fatal(lerr)
		}
		switch {
		case applied && (!errors.Is(err, lease.ErrNotHolder) || rec.HolderID != "b"):
			t.Errorf("a committed handover, then release: %v, record %+v; want ErrNotHolder and b's term", err, rec)
		case !applied && (err != nil || rec.Held()):
			t.Errorf("a lost handover, then release: %v, record %+v; want a vacant record", err, rec)
		}
	}
}

// stoppingRegistry hands a term to a registration while its contender is stopping: after the
// contender's context ended, before the registration goes.
type stoppingRegistry struct {
	*memstore.Store
	onStop func(lease.Successor)
}

func (s *stoppingRegistry) RegisterSuccessor(ctx context.Context, ns string, su lease.Successor) error {
	inner, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Store.RegisterSuccessor(inner, ns, su) }()
	<-ctx.Done()
	s.onStop(su)
	cancel()
	return <-done
}

// TestATermHandedToAStoppingContenderIsReleased: a handover that lands while the successor stops
// — registered still, no longer contending — is released by it on its way out, so the lease
// does not sit with nobody at work until it expires.
func TestATermHandedToAStoppingContenderIsReleased(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	a, aTerm := leaderA(t, mem, 30*time.Second) // a term that outlasts the test: b never takes it by expiry
	handed := make(chan error, 1)
	reg := &stoppingRegistry{Store: mem, onStop: func(su lease.Successor) { handed <- a.HandOver(ctx, aTerm.Fence, su) }}
	b, err := lease.New(reg, "jobs", lease.Identity{HolderID: "b"}, lease.WithTTL(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	_, stop := followA(t, mem, &lease.Contender{Election: b, PollInterval: time.Hour, Logger: quiet},
		func(*lease.Term) error { t.Error("b led"); return nil })
	stop()
	if err := <-handed; err != nil {
		t.Fatalf("the handover to the stopping b: %v", err)
	}
	rec, _, err := mem.Load(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Held() || rec.Fence <= aTerm.Fence {
		t.Fatalf("after b stopped: %+v; want the handed term (above fence %d) released", rec, aTerm.Fence)
	}
}

// TestAHandedTermLeavesRoomForTheStop: a successor whose work needs reserve to stop takes a
// handed term without a write only when more than a third of the TTL is left beyond it;
// otherwise it acquires with a write of its own, which dates a full term.
func TestAHandedTermLeavesRoomForTheStop(t *testing.T) {
	p := newHandoverPair(t)
	ctx := context.Background()
	p.b.SetSuccessorToken(p.toB.Token, 2*time.Second) // TTL 3 s: a fresh handed term has 2.7 s
	aTerm, _ := p.lead(t)
	if err := p.a.HandOver(ctx, aTerm.Fence, p.toB); err != nil {
		t.Fatal(err)
	}
	writesBefore := p.storeB.writes.Load()
	res, err := p.b.TryAcquire(ctx)
	if err != nil || !res.Acquired || res.Grant.Handover != (lease.Handover{}) {
		t.Fatalf("b after the handover: %+v, %v; want a term of its own", res.Grant.Record, err)
	}
	if n := p.storeB.writes.Load() - writesBefore; n != 1 {
		t.Errorf("b acquired with %d writes; want 1", n)
	}
}

// TestAContenderTakesAHandedTermItCannotUseAsHandedWithAWrite: a contender whose command needs
// long to stop (StopBefore) finds a fresh handed term too short to take as handed; it takes it
// at once with a write of its own — it does not follow its own handed term as a twin's until
// it expires.
func TestAContenderTakesAHandedTermItCannotUseAsHandedWithAWrite(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	const ttl = 6 * time.Second // a fresh handed term: 5.4 s to its deadline, 1.9 s beyond the stop
	a, aTerm := leaderA(t, mem, ttl)
	b, err := lease.New(mem, "jobs", lease.Identity{HolderID: "b"}, lease.WithTTL(ttl))
	if err != nil {
		t.Fatal(err)
	}
	c, err := lease.NewContender(lease.Contender{Election: b, RenewInterval: time.Second, PollInterval: time.Hour,
		StopBefore: 3500 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	terms := make(chan lease.Grant, 1)
	to, _ := followA(t, mem, c, func(term *lease.Term) error { terms <- term.Grant; <-term.Done(); return nil })
	if err := a.HandOver(ctx, aTerm.Fence, to); err != nil {
		t.Fatal(err)
	}
	// The handed term's fence is above a's; b's own, written on it, is above that.
	g := within(t, terms, 2*time.Second, "b's term (a handed term it followed instead would expire after 6 s)")
	if g.HolderID != "b" || g.Fence <= aTerm.Fence+1 || g.Handover != (lease.Handover{}) {
		t.Fatalf("b's term %+v; want one of its own, written on the handed one (a's fence %d)", g.Record, aTerm.Fence)
	}
}

// TestAHandoverToASuccessorThatLeftGoesToTheNext: the leader's list of successors, read after
// its last renewal, names one that has stopped since; the handover to it is refused, and the
// leader hands the term to the next one on a list read then, rather than releasing.
func TestAHandoverToASuccessorThatLeftGoesToTheNext(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	// Renewals 3 s apart: the successors have long read a's last renewal when it steps down.
	const ttl, renew = 12 * time.Second, 3 * time.Second
	type started struct {
		holder string
		grant  lease.Grant
	}
	terms := make(chan started, 4)
	states := make(chan lease.Snapshot, 64)
	aStore := &successorReads{Store: mem}
	run := func(holder string) (stop func()) {
		var store lease.Store = mem
		if holder == "a" {
			store = aStore
		}
		e, err := lease.New(store, "jobs", lease.Identity{HolderID: holder}, lease.WithTTL(ttl))
		if err != nil {
			t.Fatal(err)
		}
		c, err := lease.NewContender(lease.Contender{Election: e, RenewInterval: renew, PollInterval: time.Hour, Logger: quiet,
			OnState: func(s lease.Snapshot) {
				if holder == "a" {
					select {
					case states <- s:
					default:
					}
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- c.Run(runCtx, func(term *lease.Term) error { terms <- started{holder, term.Grant}; <-term.Done(); return nil })
		}()
		var once sync.Once
		stop = func() { once.Do(func() { cancel(); <-done }) }
		t.Cleanup(stop)
		return stop
	}
	stopA := run("a")
	if first := within(t, terms, 5*time.Second, "a's term"); first.holder != "a" {
		t.Fatalf("first term %+v", first)
	}
	stopB1 := run("b1")
	awaitSuccessors(t, mem, 2, "b1's registration")
	run("b2")
	awaitSuccessors(t, mem, 3, "b2's registration")
	// a's next renewal, after which it reads the successors: b1 (the longest registered), b2.
	for len(states) > 0 {
		<-states
	}
	reads := aStore.reads.Load()
	within(t, states, 3*renew, "a's renewal")
	deadline := time.Now().Add(5 * time.Second)
	for aStore.reads.Load() == reads {
		if time.Now().After(deadline) {
			t.Fatal("a never read the successors after its renewal")
		}
		time.Sleep(time.Millisecond)
	}
	stopB1() // gone before a's next renewal could read the list again
	stopA()
	next := within(t, terms, 2*time.Second, "the next term")
	if next.holder != "b2" || next.grant.Handover.To == "" {
		t.Fatalf("the next term: %s, %+v; want b2's, handed over", next.holder, next.grant.Record)
	}
}

// successorReads counts the reads of the successors made through it.
type successorReads struct {
	*memstore.Store
	reads atomic.Int64
}

func (s *successorReads) Successors(ctx context.Context, ns string) ([]lease.Successor, error) {
	defer s.reads.Add(1)
	return s.Store.Successors(ctx, ns)
}
