package lease

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/timing"
)

// Election is one contender's handle on one election. It is safe for concurrent use; its
// expiry observations persist across calls, so a long-lived Election detects an abandoned lease
// by its own monotonic clock even when wall clocks disagree.
type Election struct {
	store         Store
	namespace     string
	id            Identity
	ttl           time.Duration
	maxCASRetries int
	maxClockSkew  time.Duration
	clock         Clock
	recorder      Recorder
	// clockFences: the store's history can be rolled back (ClockFencer), so a new term's fence
	// is also at least the wall clock in microseconds.
	clockFences bool

	mu sync.Mutex
	// observed is the last record this process saw and the monotonic time it first saw it:
	// the record unchanged for a full recorded TTL since then means its holder is gone.
	observed    Record
	observedAt  time.Duration
	hasObserved bool

	// written is this contender's last successful write and its version. Renew and release try
	// it first instead of reading: when nobody else wrote since, the conditional write succeeds
	// without a read; otherwise it conflicts and the next attempt reads.
	written    Record
	writtenVer Version
	hasWritten bool

	// reads are the last two versions this contender read and when its latest read of each
	// began: a term handed over to it counts its deadline from the read of the record the
	// handover replaced (handover.go).
	reads [2]read
	// successorToken is this contender's successor registration, if any, and handoverReserve
	// the time its work needs to stop (SetSuccessorToken).
	successorToken  string
	handoverReserve time.Duration
	// newest is the highest version this contender read or wrote: a watched record no newer
	// is not a new handover (handoverWatched).
	newest Version

	// incarnation is what this contender records as its incarnation (Incarnation.String);
	// witnesses may prove another incarnation's holder gone, and rechecks are those that may
	// soon, without a store request (incarnation.go).
	incarnation string
	witnesses   []Witness
	rechecks    rechecks
}

// New returns an Election for namespace, contending as id, on store.
func New(store Store, namespace string, id Identity, opts ...Option) (*Election, error) {
	e := &Election{
		store:         store,
		namespace:     namespace,
		id:            id,
		ttl:           DefaultTTL,
		maxCASRetries: DefaultMaxCASRetries,
		maxClockSkew:  DefaultMaxClockSkew,
		clock:         SystemClock{},
		recorder:      nopRecorder{},
	}
	for _, opt := range opts {
		opt(e)
	}
	if err := e.validate(); err != nil {
		return nil, err
	}
	if cf, ok := store.(ClockFencer); ok {
		e.clockFences = cf.ClockFences()
	}
	if w, ok := store.(Witness); ok {
		e.witnesses = append(e.witnesses, w)
	}
	return e, nil
}

// Namespace returns the election's namespace.
func (e *Election) Namespace() string { return e.namespace }

// Identity returns this contender's identity.
func (e *Election) Identity() Identity { return e.id }

// TTL returns the lease duration this contender records.
func (e *Election) TTL() time.Duration { return e.ttl }

// Store returns the election's store.
func (e *Election) Store() Store { return e.store }

// Remaining returns how long the holder of g may still do leader work by its own monotonic
// clock; zero or less means it must stop now.
func (e *Election) Remaining(g Grant) time.Duration { return g.Deadline - e.clock.Monotonic() }

// SafetyMargin is how much earlier than the TTL a holder's deadline falls: a tenth of the TTL,
// at most two seconds (the timing module). It absorbs clock-rate differences between holder and
// contenders.
func SafetyMargin(ttl time.Duration) time.Duration { return timing.SafetyMargin(ttl) }

// Init creates the election's record if there is none. It is idempotent.
func (e *Election) Init(ctx context.Context) (Snapshot, error) {
	rec, ver, err := e.loadOrCreate(ctx)
	if err != nil {
		return Snapshot{}, fmt.Errorf("init %q: %w", e.namespace, err)
	}
	return e.snapshot(rec, ver), nil
}

// Inspect reads the election. A missing election is a Snapshot with Exists false, not an error.
func (e *Election) Inspect(ctx context.Context) (Snapshot, error) {
	rec, ver, err := e.store.Load(ctx, e.namespace)
	if errors.Is(err, ErrNotFound) {
		return Snapshot{Record: Record{Namespace: e.namespace}}, nil
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("inspect %q: %w", e.namespace, err)
	}
	e.observe(rec, ver)
	return e.snapshot(rec, ver), nil
}

// Destroy removes the election's record (the Swarm anchor). A later acquisition starts a new
// counter above every fence this election can have issued (see initialRecord).
func (e *Election) Destroy(ctx context.Context) error {
	if err := e.store.Delete(ctx, e.namespace); err != nil {
		return fmt.Errorf("destroy %q: %w", e.namespace, err)
	}
	e.mu.Lock()
	e.hasObserved, e.hasWritten = false, false
	e.mu.Unlock()
	return nil
}

// TryAcquire attempts to win the election without waiting. It wins when nobody holds the lease,
// when the lease has expired, when its holder is provably gone (a Witness says so), or when this
// very incarnation already holds it — which starts a new term with a new fence. A live term of
// another incarnation, under this identity too, is left to its holder (incarnation.go).
//
// An error that wraps ErrAmbiguous may come with Current set: a write of this call may have
// won a term that has ended since, and Current is the holder the retry found. Such a term
// grants nothing, since its winner never learnt of it.
func (e *Election) TryAcquire(ctx context.Context) (TryAcquireResult, error) {
	return e.tryAcquire(ctx, readBack)
}

// tryAcquire is TryAcquire with the write mode of its write: a Contender's acquisitions write
// blind where the store allows it (BlindUpdater), one-shot calls read back.
func (e *Election) tryAcquire(ctx context.Context, mode writeMode) (TryAcquireResult, error) {
	var result TryAcquireResult
	var evidence string
	var live bool // the decision took over a live term of another incarnation
	err := e.mutate(ctx, "try-acquire", mode, func(cur Record, ver Version, now time.Time) (Record, error) {
		if g, ok := e.handedOver(cur, ver); ok {
			result = TryAcquireResult{Acquired: true, Grant: g, Current: e.snapshot(cur, ver)}
			return Record{}, errHandedOver
		}
		// A term handed to another registration is another process's, whatever its identity;
		// one handed to this contender but not taken as handed (handedOver) is its own to take
		// with a write.
		_, toAnother := e.handedTo(cur)
		evidence, live = "", cur.Held() && (!e.ownTerm(cur) || toAnother)
		if live && !e.expired(cur, ver) {
			if evidence = e.gone(ctx, cur); evidence == "" {
				result.Current = e.snapshot(cur, ver)
				return Record{}, errHeld
			}
		}
		next := cur
		next.HolderID, next.NodeID, next.TaskID = e.id.HolderID, e.id.NodeID, e.id.TaskID
		next.Incarnation = e.incarnation
		next.Fence = e.nextFence(cur.Fence, now)
		next.AcquiredAt = now
		e.stamp(&next, now)
		return next, nil
	}, func(g Grant) {
		result = TryAcquireResult{Acquired: true, Grant: g, Current: e.snapshot(g.Record, g.Version), Evidence: evidence}
		if live {
			e.recorder.TookOver(evidence)
		}
	})
	switch {
	case errors.Is(err, errHandedOver):
		// The predecessor wrote this term: renewing it from memory is one conditional write.
		e.remember(result.Grant.Record, result.Grant.Version)
		return result, nil
	case errors.Is(err, errHeld) && errors.Is(err, ErrAmbiguous):
		return TryAcquireResult{Current: result.Current}, err
	case errors.Is(err, errHeld):
		return result, nil
	case err != nil:
		return TryAcquireResult{}, err
	}
	return result, nil
}

// Renew extends the term with the given fence. It fails with ErrNotHolder unless this identity
// holds the lease with exactly that fence. A renewal keeps the fence.
func (e *Election) Renew(ctx context.Context, fence uint64) (Grant, error) {
	var grant Grant
	err := e.mutate(ctx, "renew", readBack, func(cur Record, _ Version, now time.Time) (Record, error) {
		if err := e.checkHolder(cur, fence); err != nil {
			return Record{}, err
		}
		next := cur
		next.NodeID = e.id.NodeID
		e.stamp(&next, now)
		return next, nil
	}, func(g Grant) { grant = g })
	return grant, err
}

// Release ends the term with the given fence so that another contender can acquire at once. It
// fails with ErrNotHolder unless this identity holds the lease with exactly that fence. The
// fence counter stays: the next term gets fence+1.
func (e *Election) Release(ctx context.Context, fence uint64) error {
	return e.mutate(ctx, "release", readBack, func(cur Record, _ Version, now time.Time) (Record, error) {
		if err := e.checkHolder(cur, fence); err != nil {
			return Record{}, err
		}
		return Record{Namespace: cur.Namespace, Fence: cur.Fence, RenewedAt: now, ExpiresAt: now}, nil
	}, nil)
}

// nextFence is the fence of a term that follows one with fence at wall time now: fence + 1, or
// on a store whose history can be rolled back (ClockFencer) at least now in Unix microseconds,
// so that a record read back older than the fences already handed out still yields a fence
// above them (docs/safety.md §7c).
func (e *Election) nextFence(fence uint64, now time.Time) uint64 {
	if !e.clockFences {
		return fence + 1
	}
	return max(fence+1, uint64(max(now.UnixMicro(), 0)))
}

// ClockFences reports whether the election's fences follow the clock rule of ClockFencer.
func (e *Election) ClockFences() bool { return e.clockFences }

// errHeld stops a try-acquire that found another live holder. It leaves the package only inside
// an error that wraps ErrAmbiguous, where it says what the retry after an unsettled write found.
var errHeld = errors.New("lease: held by another contender")

func (e *Election) checkHolder(cur Record, fence uint64) error {
	if !e.id.holds(cur) || cur.Fence != fence {
		holder := "nobody"
		if cur.Held() {
			holder = fmt.Sprintf("holder %q (task %q) with fence %d", cur.HolderID, cur.TaskID, cur.Fence)
		}
		return &notHolderError{current: cur, err: fmt.Errorf("%w: %q (task %q) with fence %d does not hold the lease; it is held by %s",
			ErrNotHolder, e.id.HolderID, e.id.TaskID, fence, holder)}
	}
	return nil
}

// notHolderError is ErrNotHolder with the record the refusal was decided on, so that a holder
// stepping down learns who holds the lease now without reading it again.
type notHolderError struct {
	current Record
	err     error
}

func (e *notHolderError) Error() string { return e.err.Error() }
func (e *notHolderError) Unwrap() error { return e.err }

// stamp sets the renewal times and this contender's TTL on rec.
func (e *Election) stamp(rec *Record, now time.Time) {
	rec.Handover = Handover{} // a write of the holder's own dates its term itself
	rec.RenewedAt = now
	rec.ExpiresAt = now.Add(e.ttl)
	rec.TTL = e.ttl
}

// decideFunc computes the record to write from the current one, or refuses with an error.
type decideFunc func(cur Record, ver Version, now time.Time) (Record, error)

// writeMode says whether a mutation's conditional write must learn the version it creates.
type writeMode int

const (
	// readBack: the write returns its version (Store.Update), so that the next mutation of this
	// contender can write on it without reading first.
	readBack writeMode = iota
	// blind: the write may leave its version unknown (BlindUpdater), one store request sooner.
	blind
)

// mutate runs one compare-and-swap mutation: read (creating the record if missing), decide,
// write conditionally on the version read. Conflicts are retried up to maxCASRetries times with a
// short jittered pause; an ambiguous write is resolved by reading again. On success, won (if
// set) receives the grant.
//
// Renew and release first try this contender's own last write in place of a read: a holder
// renewing undisturbed then costs one conditional write. If anything else was written since,
// or the decision on that record refuses, they fall back to reading — a refusal is never
// based on the remembered record alone.
//
// A write whose outcome stayed unknown may still land, before or after a later read of this
// call: the call then never reports a plain refusal or a plain conflict, only an error that also
// wraps ErrAmbiguous (see unresolvedWrites).
func (e *Election) mutate(ctx context.Context, op string, mode writeMode, decide decideFunc, won func(Grant)) (err error) {
	var unresolved unresolvedWrites
	defer func() { err = unresolved.qualify(err) }()
	finish := func(g Grant, err error) error {
		if err == nil && won != nil {
			won(g)
		}
		return err
	}
	if op != "try-acquire" {
		if cur, ver, ok := e.lastWrite(); ok {
			if g, done, err := e.attempt(ctx, op, mode, cur, ver, true, decide, &unresolved); done {
				return finish(g, err)
			}
		}
	}
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if attempt > e.maxCASRetries {
				return fmt.Errorf("%s %q: %w (%d attempts)", op, e.namespace, ErrTooManyConflicts, attempt)
			}
			if err := pause(ctx, attempt); err != nil {
				return fmt.Errorf("%s %q: %w", op, e.namespace, err)
			}
		}
		cur, ver, err := e.load(ctx, op)
		if err != nil {
			if !errors.Is(err, ErrNotHolder) {
				e.recorder.StoreError(ErrorKind(err))
			}
			return fmt.Errorf("%s %q: %w", op, e.namespace, err)
		}
		if w, ok := unresolved.landed(cur); ok && op != "renew" {
			// An earlier write of this call landed after its read-back: that write is the
			// outcome, and deciding again on it would be a second effect of one call.
			e.remember(cur, ver)
			return finish(e.grant(w.rec, ver, w.start), nil)
		}
		if g, done, err := e.attempt(ctx, op, mode, cur, ver, false, decide, &unresolved); done {
			return finish(g, err)
		}
	}
}

// attempt makes one conditional write decided on cur at version ver. done is false when the
// caller should read again and retry: a conflict, a vanished record, a write whose outcome its
// read-back could not settle (added to unresolved), or — for a record taken from memory
// (fromMemory) — any refusal.
func (e *Election) attempt(ctx context.Context, op string, mode writeMode, cur Record, ver Version, fromMemory bool, decide decideFunc, unresolved *unresolvedWrites) (g Grant, done bool, err error) {
	// The write's start bounds the holder's deadline: whatever the store does afterwards, the
	// lease cannot be valid for longer than TTL from here.
	start := e.clock.Monotonic()
	now := normalizeTime(e.clock.Now())
	rec, err := decide(cur, ver, now)
	if err != nil {
		if fromMemory {
			return Grant{}, false, nil
		}
		return Grant{}, true, fmt.Errorf("%s %q: %w", op, e.namespace, err)
	}
	rec = normalizeRecord(rec)
	var newVer Version
	if ver == missing {
		newVer, err = e.store.Create(ctx, rec)
		if errors.Is(err, ErrExists) { // another contender created it first: read it
			err = ErrConflict
		}
	} else if bu, ok := e.store.(BlindUpdater); ok && mode == blind {
		newVer, err = bu.UpdateBlind(ctx, rec, ver)
	} else {
		newVer, err = e.store.Update(ctx, rec, ver)
	}
	if errors.Is(err, ErrAmbiguous) {
		var settled bool
		newVer, settled, err = e.resolveAmbiguous(ctx, rec, err)
		if !settled {
			unresolved.add(rec, start, err)
			e.recorder.Conflict()
			return Grant{}, false, nil
		}
	}
	if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
		e.recorder.Conflict()
		return Grant{}, false, nil
	}
	if err != nil {
		e.recorder.StoreError(ErrorKind(err))
		return Grant{}, true, fmt.Errorf("%s %q: %w", op, e.namespace, err)
	}
	e.observe(rec, newVer)
	e.remember(rec, newVer)
	return e.grant(rec, newVer, start), true, nil
}

// grant is the Grant of rec written at ver by a write that started at start (monotonic).
func (e *Election) grant(rec Record, ver Version, start time.Duration) Grant {
	return Grant{Record: rec, Version: ver, Deadline: start + rec.TTL - SafetyMargin(rec.TTL)}
}

func (e *Election) lastWrite() (Record, Version, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.written, e.writtenVer, e.hasWritten
}

// remember keeps rec as this contender's last write at ver; an unknown version (0) forgets it,
// so the next mutation reads.
func (e *Election) remember(rec Record, ver Version) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.written, e.writtenVer, e.hasWritten = rec, ver, ver != 0
	e.newest = max(e.newest, ver)
}

// missing is the version attempt writes with Create instead of Update: no store uses 0.
const missing Version = 0

// load reads the record. For try-acquire a missing election reads as its initial record at
// version missing, so that the first acquisition creates the election already held — one write,
// and no observer ever sees a holderless first state. Other mutations report a missing election
// as ErrNotHolder.
func (e *Election) load(ctx context.Context, op string) (Record, Version, error) {
	start := e.clock.Monotonic()
	rec, ver, err := e.store.Load(ctx, e.namespace)
	if err == nil {
		e.noteRead(ver, start)
	}
	switch {
	case errors.Is(err, ErrNotFound) && op == "try-acquire":
		return e.recordWhenMissing(), missing, nil
	case errors.Is(err, ErrNotFound):
		return Record{}, 0, fmt.Errorf("%w: the election does not exist", ErrNotHolder)
	case err == nil:
		e.observe(rec, ver)
	}
	return rec, ver, err
}

func (e *Election) loadOrCreate(ctx context.Context) (Record, Version, error) {
	var unsettled error // the last create whose outcome stayed unknown
	for range 3 {
		rec, ver, err := e.store.Load(ctx, e.namespace)
		if err == nil {
			e.observe(rec, ver)
			return rec, ver, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return Record{}, 0, err
		}
		rec = e.initialRecord()
		ver, err = e.store.Create(ctx, rec)
		if err == nil {
			e.observe(rec, ver)
			return rec, ver, nil
		}
		if !errors.Is(err, ErrExists) && !errors.Is(err, ErrAmbiguous) {
			return Record{}, 0, err
		}
		if errors.Is(err, ErrAmbiguous) {
			unsettled = err
		}
		// Another contender created it first (or it was destroyed again), or this create may
		// have landed: read it. Creating an election is idempotent, so whoever made it, it is
		// made.
	}
	if unsettled != nil {
		// The last create may have landed: a last read settles it.
		if rec, ver, err := e.store.Load(ctx, e.namespace); err == nil {
			e.observe(rec, ver)
			return rec, ver, nil
		}
		return Record{}, 0, unsettled
	}
	return Record{}, 0, fmt.Errorf("%w: the election was created and removed repeatedly", ErrTooManyConflicts)
}

// initialRecord is the record of a new election. Its fence counter starts at the current Unix
// time in microseconds, so an election destroyed and created again starts above every fence it
// issued before, provided N + L ≤ T (all in microseconds): N terms issued by the old election,
// L how far the new creator's wall clock is behind the old creator's, T the time between the
// two creations. docs/safety.md has the derivation.
func (e *Election) initialRecord() Record {
	now := normalizeTime(e.clock.Now())
	floor := max(now.UnixMicro(), 0)
	return Record{Namespace: e.namespace, Fence: uint64(floor), RenewedAt: now, ExpiresAt: now}
}

// recordWhenMissing is the record a try-acquire decides on when the election does not exist.
// A term this contender saw held by another, and that has not expired by its rules, may still
// be at work: the election was destroyed (or a file store's directory removed) under it, and
// its holder learns of that only at its next renewal. Until it expires it reads as still held;
// after it, the new incarnation's fences start above it and above the clock (initialRecord).
func (e *Election) recordWhenMissing() Record {
	initial := e.initialRecord()
	e.mu.Lock()
	seen, ok := e.observed, e.hasObserved
	e.mu.Unlock()
	if !ok {
		return initial
	}
	if !seen.Held() { // released, then gone: no term at work, but its fence was granted
		initial.Fence = max(initial.Fence, seen.Fence)
		return initial
	}
	if !e.ownTerm(seen) && !e.expired(seen, missing) {
		return seen
	}
	initial.Fence = max(initial.Fence, seen.Fence)
	return initial
}

func normalizeRecord(r Record) Record {
	r.AcquiredAt = normalizeTime(r.AcquiredAt)
	r.RenewedAt = normalizeTime(r.RenewedAt)
	r.ExpiresAt = normalizeTime(r.ExpiresAt)
	return r
}

// observe remembers rec with the monotonic time it was first seen unchanged.
func (e *Election) observe(rec Record, _ Version) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.hasObserved && e.observed.Equal(rec) {
		return
	}
	e.observed, e.observedAt, e.hasObserved = rec, e.clock.Monotonic(), true
}

// expired applies the expiry rules to a held record: unchanged for a full recorded TTL of this
// process's monotonic time since first observed, or the local wall clock past its expiry by more
// than the maximum clock skew.
func (e *Election) expired(rec Record, _ Version) bool {
	if !rec.Held() {
		return true
	}
	if e.clock.Now().After(rec.ExpiresAt.Add(e.maxClockSkew)) {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.hasObserved && e.observed.Equal(rec) && e.clock.Monotonic()-e.observedAt >= rec.TTL
}

// UntilExpiry returns how long, by this contender's rules and observations, until the lease of
// s may be taken over: zero when it already may. A contender that was refused sleeps at most
// this long before trying again.
func (e *Election) UntilExpiry(s Snapshot) time.Duration {
	if !s.Held() {
		return 0
	}
	wall := s.ExpiresAt.Add(e.maxClockSkew).Sub(e.clock.Now())
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.hasObserved && e.observed.Equal(s.Record) {
		wall = min(wall, e.observedAt+s.TTL-e.clock.Monotonic())
	}
	return max(wall, 0)
}

func (e *Election) snapshot(rec Record, ver Version) Snapshot {
	return Snapshot{Record: rec, Version: ver, Exists: true, Acquired: rec.Held() && !e.expired(rec, ver)}
}

// pause waits a short, jittered, growing time before a CAS retry so that contenders that
// collided do not collide again in lockstep.
func pause(ctx context.Context, attempt int) error {
	return timing.Sleep(ctx, time.Duration(rand.Int64N(int64(min(attempt, 8))*int64(2*time.Millisecond))))
}
