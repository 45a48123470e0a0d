package lease

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/timing"
)

// Reasons a term ends, as the cause of its context (context.Cause).
var (
	// ErrDeadline: the holder reached its own deadline (minus StopBefore) without a renewal.
	ErrDeadline = errors.New("lease: deadline reached without renewal")
	// ErrLost: the store shows another holder or fence (the lease was taken over or destroyed).
	ErrLost = errors.New("lease: leadership lost")
	// ErrSteppedDown: the leader ended the term itself (lead returned, or the contender stopped).
	ErrSteppedDown = errors.New("lease: stepped down")
)

// Contender contends for an election until its context ends — one campaign (an acquisition
// attempt, Election.TryAcquire) after another — and runs a function for every term it wins. It is
// the engine of the `run` supervisor. Build it with NewContender, which checks the timing rule
// once; Run checks a Contender built otherwise again.
type Contender struct {
	// Election is the election to contend for.
	Election *Election
	// RenewInterval is how often the leader renews (default TTL/3).
	RenewInterval time.Duration
	// PollInterval is how often a follower reads the election when no notification arrives
	// (default 1 s); a follower also wakes exactly when the holder's lease may expire.
	PollInterval time.Duration
	// StopBefore ends each term this long before the holder's deadline, so that the term's work
	// (a child process given a grace period) is over by the deadline. Default 0.
	StopBefore time.Duration
	// Logger receives one line per transition (default: slog.Default()).
	Logger *slog.Logger
	// OnState, when set, receives every state of the election the contender reads or writes,
	// so that a server in the same process can serve it without reading the store itself.
	OnState func(Snapshot)
}

func (c *Contender) onState(s Snapshot) {
	if c.OnState != nil {
		c.OnState(s)
	}
}

// Term is one leadership term, alive until Done is closed.
type Term struct {
	// Grant is the grant that started the term (its fence never changes within the term).
	Grant    Grant
	ctx      context.Context
	election *Election
	renewed  chan struct{}
	mu       sync.Mutex
	last     Grant // the last confirmed write's grant
}

// Remaining is how long until the deadline of the term's last confirmed write (Grant, or the
// last renewal), by the election's monotonic clock; it is negative once that has passed.
func (t *Term) Remaining() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.election.Remaining(t.last)
}

// Renewed receives a value after each renewal that moved the deadline (one pending at most:
// read Remaining for the newest).
func (t *Term) Renewed() <-chan struct{} { return t.renewed }

// renew records a confirmed renewal.
func (t *Term) renew(g Grant) {
	t.mu.Lock()
	t.last = g
	t.mu.Unlock()
	select {
	case t.renewed <- struct{}{}:
	default:
	}
}

// Done is closed when the term ends; Cause tells why.
func (t *Term) Done() <-chan struct{} { return t.ctx.Done() }

// Context is cancelled when the term ends.
func (t *Term) Context() context.Context { return t.ctx }

// Cause is ErrDeadline, ErrLost, ErrSteppedDown or the error of Run's context once Done is
// closed, nil before.
func (t *Term) Cause() error { return context.Cause(t.ctx) }

// ErrStopContending, returned by a lead function, makes Run stop contending after the term (e.g.
// `run --once`); Run returns it.
var ErrStopContending = errors.New("lease: contending stopped by the leader")

// minCampaignTime is the least time a campaign gets, whatever the poll interval: enough for a
// write of a store that is busy, not stuck.
const minCampaignTime = time.Second

// minWakeSpacing bounds how often notifications can make a follower read the store; the first
// notification after a quiet spell wakes it at once (wakeSpacing).
const minWakeSpacing = 50 * time.Millisecond

// followerWakeBurst lets a follower read at once on two notifications in a row — the holder's
// renewal and its release right after — before minWakeSpacing applies (wakeSpacing).
const followerWakeBurst = 2

// validate fills defaults and applies the timing rule (CheckTiming).
func (c *Contender) validate() error {
	if c.Election == nil {
		return errors.New("lease: contender: an election is required")
	}
	ttl := c.Election.TTL()
	if c.RenewInterval == 0 {
		c.RenewInterval = timing.DefaultRenewInterval(ttl)
	}
	c.PollInterval = cmp.Or(c.PollInterval, time.Second)
	c.Logger = cmp.Or(c.Logger, slog.Default())
	if c.Election.incarnation == "" {
		// A contender is one process for as long as it runs: another process under its
		// identity — its restarted successor, or a twin — is another incarnation.
		c.Election.incarnation = Incarnation{ID: NewIncarnationID()}.String()
	}
	return CheckTiming(ttl, c.RenewInterval, c.PollInterval, c.StopBefore)
}

// Run contends until ctx ends. Each time it wins, it calls lead with the term, in the calling
// goroutine; lead must return once term.Done() is closed, and may return earlier to step down.
// After every term the lease is released (if still held) — on a store that keeps successor
// registrations, handed over to a registered follower instead — so a follower takes over at once.
// Run returns nil when ctx ends, the error of lead if it returned one other than nil (after
// releasing), or a permanent store error (a corrupt record, not a Swarm manager).
func (c *Contender) Run(ctx context.Context, lead func(term *Term) error) error {
	if err := c.validate(); err != nil {
		return err
	}
	e := c.Election
	var notify <-chan struct{}
	if n, ok := e.Store().(Notifier); ok {
		ch, err := n.Notify(ctx, e.Namespace())
		if err != nil {
			c.Logger.Warn("notifications unavailable; polling only", "namespace", e.Namespace(), "err", err)
		} else {
			notify = ch
		}
	}
	succ := newSuccession(c)
	if succ != nil {
		// The registration is removed as Run returns, not as ctx ends: a leader told to stop
		// hands its term over first, and the removal — a write of its own — must not compete
		// with that handover's write. A successor that is gone is not handed a term; one handed
		// to it while it was stopping is released.
		regCtx, stopRegistration := context.WithCancel(context.WithoutCancel(ctx))
		registered := make(chan struct{})
		go func() { defer close(registered); succ.keepRegistered(regCtx, c.PollInterval) }()
		defer func() {
			stopRegistration()
			<-registered
			c.releaseHandedTerm(ctx, succ.self.Token)
		}()
	}
	var lastErr string
	wakes := &wakeSpacing{spacing: minWakeSpacing, burst: followerWakeBurst}
	clash := &identityClash{log: c.Logger.With("namespace", e.Namespace())}
	for ctx.Err() == nil {
		// A handover, as the store's change feed delivered it, is decided without a request:
		// a term handed to this contender starts, one handed to another is followed.
		// Otherwise: blind where the store allows it — the term starts once the write is
		// confirmed, a request sooner than if it waited to learn its version (the first renewal
		// reads).
		res, decided := e.handoverWatched()
		var err error
		timedOut := false
		if !decided {
			// On a store that sends a request another member could answer elsewhere (Rerouter),
			// a campaign's answer is of use for about a poll interval: one that has none by then
			// is sent again. Elsewhere (Swarm: a write may block 20 s while Raft elects, and
			// still commit) the campaign takes the time its store takes.
			actx, cancel := ctx, context.CancelFunc(func() {})
			if r, ok := e.Store().(Rerouter); ok && r.Reroutes() {
				actx, cancel = context.WithTimeout(ctx, max(c.PollInterval, minCampaignTime))
			}
			res, err = e.tryAcquire(actx, blind)
			timedOut = actx.Err() != nil && ctx.Err() == nil
			cancel()
		}
		switch {
		case ctx.Err() != nil:
			// Shut down while trying: if the attempt won (or may have), hand the term back at
			// once rather than leave it to expire.
			if res.Acquired || err != nil {
				c.releaseIfHeld(ctx, res)
			}
			return nil
		case err != nil && errors.Is(err, ErrAmbiguous) && res.Current.Exists:
			// A write of this attempt may have won a term that has ended since; another
			// contender holds the lease now: follow it like any refusal.
			if err.Error() != lastErr {
				c.Logger.Warn("store error", "namespace", e.Namespace(), "err", err)
				lastErr = err.Error()
			}
		case err != nil:
			if permanent(err) {
				return err
			}
			if err.Error() != lastErr { // one line per distinct failure, not per poll
				c.Logger.Warn("store error", "namespace", e.Namespace(), "err", err)
				lastErr = err.Error()
			}
			if !timedOut { // a campaign out of time has waited already
				_ = timing.Sleep(ctx, c.PollInterval)
			}
			continue
		case res.Acquired:
			lastErr = ""
			if res.Evidence != "" {
				c.Logger.Info("the holder is gone: taking over before its lease expires", "namespace", e.Namespace(), "evidence", res.Evidence)
			}
			c.onState(res.Current)
			steppedDown, err := c.runTerm(ctx, res.Grant, notify, clash, succ, lead)
			if err != nil {
				return err
			}
			if steppedDown {
				// The leader ended its term itself (its work exited): give the others one poll
				// interval to take over, and never spin acquire/release with a crashing child.
				_ = timing.Sleep(ctx, c.PollInterval)
			}
			continue
		}
		if err == nil {
			lastErr = ""
		}
		clash.following(res.Current.Record, e)
		c.onState(res.Current)
		wait := min(c.PollInterval, e.UntilExpiry(res.Current)+time.Millisecond)
		c.waitFollower(ctx, wait, notify, wakes, res.Current.Record)
	}
	return nil
}

// releaseIfHeld releases the lease, on a fresh context, if res won it or the store shows this
// identity holding it (a write that committed while its caller was cancelled).
func (c *Contender) releaseIfHeld(ctx context.Context, res TryAcquireResult) {
	e := c.Election
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	fence := res.Grant.Fence
	if !res.Acquired {
		snap, err := e.Inspect(rctx)
		if err != nil || !e.ownTerm(snap.Record) {
			return
		}
		fence = snap.Fence
	}
	if err := e.Release(rctx, fence); err == nil {
		c.Logger.Info("released", "namespace", e.Namespace(), "fence", fence, "reason", "shutdown while acquiring")
	}
}

// releaseHandedTerm releases, on a fresh context, a term handed over to this contender's
// registration (token) that it never took: a handover that landed while the contender was
// stopping would otherwise hold the lease, with nobody at work, until it expired.
func (c *Contender) releaseHandedTerm(ctx context.Context, token string) {
	e := c.Election
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	snap, err := e.Inspect(rctx)
	if err != nil || snap.Handover.To != token || !e.ownTerm(snap.Record) {
		return
	}
	if err := e.Release(rctx, snap.Fence); err == nil {
		c.Logger.Info("released", "namespace", e.Namespace(), "fence", snap.Fence, "reason", "handed over while stopping")
	}
}

// waitFollower sleeps up to wait, or until a notification (spaced by wakes), or until a witness
// proves the holder of held — the record followed — gone, or until ctx ends.
func (c *Contender) waitFollower(ctx context.Context, wait time.Duration, notify <-chan struct{}, wakes *wakeSpacing, held Record) {
	t := time.NewTimer(wait)
	defer t.Stop()
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-c.Election.goneLater(wctx, held):
	case <-notify:
		if d := wakes.delay(c.Election.clock.Monotonic()); d > 0 {
			_ = timing.Sleep(ctx, d)
		}
	}
}

// runTerm keeps the lease renewed while lead runs, ends the term at the deadline or on loss, and
// hands the lease over or releases it afterwards. steppedDown reports that lead returned while the term was
// still alive.
func (c *Contender) runTerm(ctx context.Context, g Grant, notify <-chan struct{}, clash *identityClash, succ *succession, lead func(*Term) error) (steppedDown bool, err error) {
	e := c.Election
	log := c.Logger.With("namespace", e.Namespace(), "holder_id", g.HolderID, "task_id", g.TaskID, "fence", g.Fence)
	termCtx, end := context.WithCancelCause(ctx)
	defer end(ErrSteppedDown)
	// The deadline timer runs on its own: a renewal blocked in the store cannot delay it.
	stopIn := func(g Grant) time.Duration { return e.Remaining(g) - c.StopBefore }
	deadline := time.AfterFunc(stopIn(g), func() { end(ErrDeadline) })
	defer deadline.Stop()
	log.Info("acquired", "expires_at", g.ExpiresAt)
	e.recorder.Leading(g.Fence, true)
	defer e.recorder.Leading(g.Fence, false)

	term := &Term{Grant: g, ctx: termCtx, election: e, renewed: make(chan struct{}, 1), last: g}
	var successors *candidates // read off the path of the term's end, for its handover
	if succ != nil {
		successors = succ.watchCandidates(termCtx)
	}
	var wg sync.WaitGroup
	last := g // the last confirmed write's grant, a renewal confirmed after the term's end included
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.keepRenewed(termCtx, g, notify, clash, log, func(next Grant) {
			last = next
			if deadline.Stop() { // not yet fired: move it
				deadline.Reset(stopIn(next))
				term.renew(next)
			}
			successors.renewal()
		}, end)
	}()

	leadErr := lead(term)
	steppedDown = termCtx.Err() == nil
	end(ErrSteppedDown)
	wg.Wait()
	log.Info("term ended", "reason", reason(termCtx))

	// Hand over or release on a fresh context: the contender's may already be cancelled
	// (shutdown). Neither waits past the term's deadline: the followers take the lease at its
	// expiry soon after, and a write still on its way would only hold up the step-down. A term
	// lost to another holder, or past its deadline, has nothing to hand over.
	left := e.Remaining(last)
	if left <= 0 {
		return steppedDown, leadErr
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), left)
	defer cancel()
	if successors != nil && !errors.Is(context.Cause(termCtx), ErrLost) {
		if to, ok := succ.handOver(rctx, e, g.Fence, successors); ok {
			log.Info("handed over", "successor_holder_id", to.Identity.HolderID, "successor_task_id", to.Identity.TaskID)
			return steppedDown, leadErr
		}
	}
	if err := e.Release(rctx, g.Fence); err == nil {
		log.Info("released")
	} else if !errors.Is(err, ErrNotHolder) {
		log.Warn("release failed; unless it reached the store, followers take over when the lease expires", "err", err)
	}
	return steppedDown, leadErr
}

// renewDelay is how long after a confirmed write of g the next renewal starts: RenewInterval,
// or half of what is left of the term when less is left — a write that blocked (a Swarm write
// can take 20 s while the Raft leader changes) leaves a deadline nearer than RenewInterval, and
// the term must not end unrenewed for want of trying.
func (c *Contender) renewDelay(g Grant) time.Duration {
	return min(c.RenewInterval, max(c.Election.Remaining(g)-c.StopBefore, 0)/2)
}

// keepRenewed renews every RenewInterval (retrying failures every PollInterval) until the term
// ends; moved is called after every successful renewal. A notification triggers a read: if the
// store shows another holder or fence, the term ends at once.
//
// A term under this contender's identity with another fence is another process's (clash): the
// term ends with errLostToTwin, and the contender stops taking such terms over.
func (c *Contender) keepRenewed(ctx context.Context, g Grant, notify <-chan struct{}, clash *identityClash, log *slog.Logger, moved func(Grant), end context.CancelCauseFunc) {
	e := c.Election
	fence, current := g.Fence, g
	first := c.renewDelay(g)
	next, renewAt := time.NewTimer(first), time.Now().Add(first)
	defer next.Stop()
	schedule := func(d time.Duration) { next.Reset(d); renewAt = time.Now().Add(d) }
	lastRenewed := time.Now()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-notify:
			// The read is of no use past the next renewal, which learns the same.
			ictx, cancel := context.WithDeadline(ctx, renewAt)
			snap, err := e.Inspect(ictx)
			cancel()
			if err == nil {
				c.onState(snap)
			}
			if err == nil && (!snap.Exists || snap.Fence != fence || !e.id.holds(snap.Record)) {
				log.Warn("lost", "reason", "the store shows another holder or fence", "current_holder_id", snap.HolderID, "current_fence", snap.Fence)
				end(c.lossCause(snap.Record, fence, clash))
				return
			}
			continue
		case <-next.C:
		}
		began := time.Now()
		renewed, err := e.Renew(ctx, fence)
		e.recorder.Renewed(time.Since(began), err)
		switch {
		case err == nil:
			if failing || time.Since(lastRenewed) > 2*c.RenewInterval {
				log.Warn("renewed-late", "since_last_renewal", time.Since(lastRenewed).Round(time.Millisecond))
			}
			failing, lastRenewed, current = false, time.Now(), renewed
			moved(renewed)
			c.onState(Snapshot{Record: renewed.Record, Version: renewed.Version, Exists: true, Acquired: true})
			schedule(c.renewDelay(renewed))
		case errors.Is(err, ErrNotHolder):
			// Who holds it now — the record the refusal was decided on, no further read on
			// the way to the step-down — decides whether it was another process under this
			// identity.
			cause := error(ErrLost)
			var nh *notHolderError
			if errors.As(err, &nh) {
				cause = c.lossCause(nh.current, fence, clash)
			}
			end(cause)
			log.Warn("lost", "reason", err.Error())
			return
		case ctx.Err() != nil:
			return
		default:
			if !failing {
				log.Warn("renewal failed; retrying until the deadline", "err", err, "remaining", e.Remaining(current).Round(time.Millisecond))
			}
			failing = true
			schedule(min(c.PollInterval, c.RenewInterval))
		}
	}
}

// lossCause is why a term with fence ended, given the record that shows it lost: errLostToTwin
// when the record is a term under this identity that this contender did not take, else ErrLost.
func (c *Contender) lossCause(rec Record, fence uint64, clash *identityClash) error {
	if clash.lost(rec, fence, c.Election) {
		return errLostToTwin
	}
	return ErrLost
}

func reason(ctx context.Context) string {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, ErrIdentityInUse):
		return "lost: another process uses this identity"
	case errors.Is(cause, ErrDeadline):
		return "deadline"
	case errors.Is(cause, ErrLost):
		return "lost"
	case errors.Is(cause, ErrSteppedDown):
		return "stepped down"
	default:
		return "shutdown"
	}
}

// permanent reports errors that retrying cannot fix without an operator.
func permanent(err error) bool {
	var corrupt *CorruptError
	return errors.As(err, &corrupt) || errors.Is(err, ErrNotManager)
}
