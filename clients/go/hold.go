package swarmlease

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/regbo/lfp-swarm-lease/timing"
)

// Reasons a Leadership ends, as its Cause.
var (
	// ErrLost: the server says the term is over — another term holds the room (the cause also
	// matches ErrHeldByOther) or the lease expired or was resigned (ErrVacant) — or refuses to
	// renew it for good (ErrForbidden, ...). The cause wraps the server's *APIError.
	ErrLost = errors.New("swarmlease: leadership lost")
	// ErrDeadline: the safety deadline (minus the stop time) came without a successful renewal:
	// the server was unreachable or failing for that long. The lease may be taken over from then.
	ErrDeadline = errors.New("swarmlease: deadline passed without a successful renewal")
	// ErrResigned: the leader called Resign.
	ErrResigned = errors.New("swarmlease: resigned")
)

// SafetyMargin is how much earlier than the TTL Hold's safety deadline falls: a tenth of the
// TTL, at most two seconds — the lease's own margin (the timing module). It absorbs clock-rate
// differences between the leader and the server.
func SafetyMargin(ttl time.Duration) time.Duration { return timing.SafetyMargin(ttl) }

// HoldOption configures Hold and NewRoomContender.
type HoldOption func(*holdConfig)

type holdConfig struct {
	stopBefore    time.Duration
	renewInterval time.Duration // 0 until NewRoomContender sets the default, a third of the TTL
	following     func(Leader)
	err           error
}

// WithFollowing has the contender call f, instead of logging, each time a campaign it loses
// shows another leader or term: a supervisor that logs its own transitions keeps one vocabulary.
func WithFollowing(f func(leader Leader)) HoldOption {
	return func(c *holdConfig) { c.following = f }
}

// WithStopBefore ends each Leadership this long before its safety deadline when renewals fail,
// so that the leader's work — a child process given a grace period — is over by the deadline
// (default 0).
func WithStopBefore(d time.Duration) HoldOption {
	return func(c *holdConfig) {
		if d < 0 {
			c.err = fmt.Errorf("swarmlease: WithStopBefore: %v is negative", d)
			return
		}
		c.stopBefore = d
	}
}

// WithRenewInterval sets how often the leader renews, counted from the start of the last
// confirmed request (default: a third of the TTL, not the server's renew_after_ms of
// half the TTL). Each wait is shortened by up to a fifth at random, so that many leaders do not
// renew in step.
func WithRenewInterval(d time.Duration) HoldOption {
	return func(c *holdConfig) {
		if d <= 0 {
			c.err = fmt.Errorf("swarmlease: WithRenewInterval: %v is not positive", d)
			return
		}
		c.renewInterval = d
	}
}

// Hold campaigns in the room until it wins, then keeps the term renewed in the background and
// returns it as a Leadership; the Leadership ends (Done) when the term is lost, when its safety
// deadline comes without a successful renewal, on Resign, or when ctx ends. It is NewRoomContender
// followed by RoomContender.Hold: the errors of both.
func (c *Client) Hold(ctx context.Context, roomID string, req CampaignRequest, opts ...HoldOption) (*Leadership, error) {
	h, err := c.NewRoomContender(roomID, req, opts...)
	if err != nil {
		return nil, err
	}
	return h.Hold(ctx)
}

// NewRoomContender checks the settings of a contender for the room once, before any request: the
// room id, the options, the TTL (ErrInvalidTTL: whole seconds from 5 s to 300 s; zero is
// DefaultTTL) and the timing rule (*TimingError: the renew interval plus the stop time must be
// below TTL − SafetyMargin(TTL)). The RoomContender it returns contends for any number of terms, one
// per Hold call.
func (c *Client) NewRoomContender(roomID string, req CampaignRequest, opts ...HoldOption) (*RoomContender, error) {
	var hc holdConfig
	for _, opt := range opts {
		if opt != nil {
			opt(&hc)
		}
	}
	if hc.err != nil {
		return nil, hc.err
	}
	if err := checkRoomID(roomID); err != nil {
		return nil, err
	}
	req.TTL = cmp.Or(req.TTL, DefaultTTL)
	if !timing.RoomTTLValid(req.TTL) {
		return nil, fmt.Errorf("%w: %v: want a whole number of seconds from %d to %d", ErrInvalidTTL, req.TTL, int(MinTTL/time.Second), int(MaxTTL/time.Second))
	}
	if hc.renewInterval == 0 {
		// A third of the TTL, as the Swarm lease renews, rather than the server's
		// renew_after_ms (half): the term must also survive slow answers and a few retries
		// before its deadline, which falls a margin and the stop time before the TTL.
		hc.renewInterval = timing.DefaultRenewInterval(req.TTL)
	}
	if err := timing.Check(req.TTL, hc.renewInterval, hc.stopBefore); err != nil {
		return nil, err
	}
	return &RoomContender{c: c, room: roomID, req: req, cfg: hc, window: timing.Window(req.TTL),
		log: c.cfg.logger.With("election_id", roomID, "candidate_id", req.CandidateID)}, nil
}

// Hold campaigns until it wins, then keeps the term renewed in the background and returns it
// as a Leadership.
//
// While the room has another leader, Hold waits for the retry_after_ms the server names, and
// follows the room's watch stream in the meantime so that it campaigns as soon as the room is
// vacant (a resigning leader is replaced at once). Rate and capacity limits are waited out for
// their Retry-After; network and server failures are retried with jittered exponential
// back-off (WithBackoff). An answer that retrying cannot change — an invalid room, candidate,
// metadata or TTL, disabled elections — is returned as an error, as is ctx's error when ctx ends
// first.
//
// Safety rests on the leader's own monotonic clock only: the safety deadline is the start of
// the last request that succeeded (the winning campaign, then each renewal) plus the TTL minus
// SafetyMargin — the server cannot have written the lease before the request started, so it
// cannot expire it earlier — and never the server's expires_at.
func (h *RoomContender) Hold(ctx context.Context) (*Leadership, error) { return h.contend(ctx) }

// RoomContender contends for one room — campaign after campaign until one wins — with settings
// NewRoomContender has checked. Each Hold call wins one term.
type RoomContender struct {
	c      *Client
	room   string
	req    CampaignRequest
	cfg    holdConfig
	window time.Duration // TTL − safety margin
	log    *slog.Logger
	// won is the fence of the term this contender won last (0: none yet).
	won atomic.Uint64
}

// minFollowerWait keeps a follower told to retry "now" (its leader's lease is just ending)
// from campaigning in a tight loop.
const minFollowerWait = 20 * time.Millisecond

// contend campaigns until it wins, a permanent answer comes, or ctx ends.
func (h *RoomContender) contend(ctx context.Context) (*Leadership, error) {
	cfg := &h.c.cfg
	bo := backoff{min: cfg.minBackoff, max: cfg.maxBackoff, jitter: cfg.jitter}
	var (
		vacant   *vacancyWatch
		followed Leader
		failures timing.Failures
	)
	defer func() { vacant.stop() }()
	for {
		// A vacancy seen before this campaign is answered by the campaign itself; one seen
		// after it (even before the answer arrives) must still wake the follower.
		vacant.drain()
		start := time.Now()
		res, err := h.c.Campaign(ctx, h.room, h.req)
		if ctx.Err() != nil {
			if err == nil && res.IsLeader() {
				// Won while being cancelled: hand the term back rather than leave it to expire.
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.requestTimeout)
				_, _ = h.c.Resign(rctx, h.room, res.Token)
				cancel()
			}
			return nil, ctx.Err()
		}
		if err != nil {
			var apiErr *APIError
			if errors.As(err, &apiErr) && !apiErr.temporary() {
				return nil, err
			}
			delay := bo.next()
			if apiErr != nil && apiErr.RetryAfter > delay {
				// A rate or capacity limit: the server says when. Up to a fifth more at random,
				// so that the clients it refused together do not all come back together.
				delay = apiErr.RetryAfter + time.Duration(float64(apiErr.RetryAfter/5)*jitter(cfg.jitter))
			}
			if failures.Fail(time.Now(), err) { // at a bounded rate, with the count: never silent while failing
				h.log.Warn("swarmlease: campaign failed; retrying", "err", err, "failures", failures.Count(),
					"failing_for", time.Since(failures.Since()).Round(time.Second), "delay", delay.Round(time.Millisecond))
			}
			if h.c.sleep(ctx, delay) != nil {
				return nil, ctx.Err()
			}
			continue
		}
		bo.reset()
		if n := failures.Succeed(); n > 1 {
			h.log.Info("swarmlease: campaign answered again", "failures", n)
		}
		if res.IsLeader() {
			h.won.Store(res.Leader.Term)
			return h.lead(ctx, start, res), nil
		}
		if res.Leader.Term != followed.Term || res.Leader.CandidateID != followed.CandidateID {
			if won := h.won.Load(); res.Leader.CandidateID == h.req.CandidateID && res.Leader.Term != won {
				// A term of this candidate id that this contender did not win. Before it has won
				// any, it may be its predecessor's (a restarted process), which ends by itself;
				// after, it is another process that campaigns as the same candidate. The server
				// never lets one take the room from the other, but whoever reads the room cannot
				// tell them apart.
				if won == 0 {
					h.log.Warn("swarmlease: the room is led by this candidate id: a term of this process's predecessor, which ends by itself, "+
						"or of another process that campaigns with the same candidate id", "leader_candidate_id", res.Leader.CandidateID, "term", res.Leader.Term)
				} else {
					h.log.Error("swarmlease: the room is led by this candidate id, but not by this contender: another process campaigns "+
						"with the same candidate id; give each its own", "leader_candidate_id", res.Leader.CandidateID, "term", res.Leader.Term)
				}
			} else if h.cfg.following != nil {
				h.cfg.following(res.Leader)
			} else {
				h.log.Info("swarmlease: following", "leader_candidate_id", res.Leader.CandidateID, "term", res.Leader.Term,
					"retry_after", res.RetryAfter.Round(time.Millisecond))
			}
			followed = res.Leader
		}
		if vacant == nil {
			vacant = h.c.watchVacancy(ctx, h.room)
		}
		t := time.NewTimer(max(res.RetryAfter, minFollowerWait))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		case <-vacant.ch:
			t.Stop()
		}
	}
}

// vacancyWatch follows a room's watch stream while its contender is a follower, and signals when
// the room is vacant. Its failures are not errors: the follower's timer still bounds the wait.
type vacancyWatch struct {
	ch     chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

func (c *Client) watchVacancy(ctx context.Context, roomID string) *vacancyWatch {
	wctx, cancel := context.WithCancel(ctx)
	v := &vacancyWatch{ch: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	// No initial timeout: the follower's timer bounds each wait, and the watch only shortens it.
	w := c.newRoomWatch(roomID, 0, func(s RoomState) bool {
		if s.Status == StatusVacant {
			select {
			case v.ch <- struct{}{}:
			default:
			}
		}
		return true
	})
	go func() {
		defer close(v.done)
		_ = w.run(wctx)
	}()
	return v
}

func (v *vacancyWatch) drain() {
	if v == nil {
		return
	}
	select {
	case <-v.ch:
	default:
	}
}

func (v *vacancyWatch) stop() {
	if v != nil {
		v.cancel()
		<-v.done
	}
}

// Leadership is one term won by Hold, alive until Done is closed. Its accessors never reveal
// the token; Resign uses it.
type Leadership struct {
	c          *Client
	room       string
	token      LeaderToken
	fence      uint64
	ttl        time.Duration
	stopBefore time.Duration
	ctx        context.Context
	end        context.CancelCauseFunc
	renewing   chan struct{} // closed when the renewal loop has returned

	mu       sync.Mutex
	leader   Leader
	deadline time.Time // safety deadline (monotonic)
	stopAt   *time.Timer
	renewals chan struct{}

	resignOnce sync.Once
	resigned   uint64
	resignErr  error
}

// String describes the term without its token: room, term and safety deadline.
func (l *Leadership) String() string {
	return fmt.Sprintf("leadership of room %s, term %d, deadline %s", l.room, l.fence, l.Deadline().Format(time.RFC3339Nano))
}

// Format implements fmt.Formatter: every verb prints String, so that %v and %+v cannot reach
// the token through the unexported fields.
func (l *Leadership) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, l.String()) }

// LogValue implements slog.LogValuer, for the same reason.
func (l *Leadership) LogValue() slog.Value {
	return slog.GroupValue(slog.String("election_id", l.room), slog.Uint64("term", l.fence), slog.Time("deadline", l.Deadline()))
}

// RoomID is the room the term is of.
func (l *Leadership) RoomID() string { return l.room }

// Fence is the term's fencing token — the number the elections API calls the term (`term` on
// the wire, Leader.Term): strictly increasing within the room, never reused. It never changes
// within a Leadership.
func (l *Leadership) Fence() uint64 { return l.fence }

// Leader is the term as the server last answered it (the winning campaign, then each successful
// renewal): candidate, metadata, term and the server's expires_at.
func (l *Leadership) Leader() Leader {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leader
}

// Deadline is the safety deadline: the start of the last successful request of the term plus
// the TTL minus SafetyMargin(TTL), by this process's monotonic clock. Unless a renewal succeeds
// first, Done is closed the stop time (WithStopBefore) before it.
func (l *Leadership) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

// Renewed receives a value after each renewal that moved the deadline (one pending at most:
// read Deadline for the newest). A supervisor hands each new deadline to whatever must stop
// by it.
func (l *Leadership) Renewed() <-chan struct{} { return l.renewals }

// Done is closed when the term ends; Cause tells why.
func (l *Leadership) Done() <-chan struct{} { return l.ctx.Done() }

// Context is cancelled when the term ends: leader work run under it stops with the term.
func (l *Leadership) Context() context.Context { return l.ctx }

// Cause is nil while the term lasts, then why it ended: ErrLost (wrapping the server's answer),
// ErrDeadline, ErrResigned, or the cause of Hold's context.
func (l *Leadership) Cause() error { return context.Cause(l.ctx) }

// Resign ends the term — renewals stop at once — and tells the server, so that a follower can
// win the room without waiting for the lease to expire; it returns the fence of the term that
// ended. After ErrLost there is nothing to resign: it returns (0, nil) without a request.
// Otherwise the server's refusal is returned (ErrLeaseNotCurrent: the lease had already
// expired). ctx bounds the request: after a shutdown, pass a fresh one (context.WithoutCancel
// with a timeout). Only the first call sends anything; later calls return its result.
func (l *Leadership) Resign(ctx context.Context) (fence uint64, err error) {
	l.resignOnce.Do(func() {
		l.end(ErrResigned)
		<-l.renewing // no renewal races the resignation
		if errors.Is(l.Cause(), ErrLost) {
			return
		}
		l.resigned, l.resignErr = l.c.Resign(ctx, l.room, l.token)
	})
	return l.resigned, l.resignErr
}

// lead starts the term that the campaign started at start won.
func (h *RoomContender) lead(ctx context.Context, start time.Time, res CampaignResult) *Leadership {
	lctx, end := context.WithCancelCause(ctx)
	l := &Leadership{c: h.c, room: h.room, token: res.Token, fence: res.Leader.Term, ttl: h.req.TTL,
		stopBefore: h.cfg.stopBefore, ctx: lctx, end: end, renewing: make(chan struct{}), leader: res.Leader,
		deadline: start.Add(h.window), renewals: make(chan struct{}, 1)}
	l.stopAt = time.AfterFunc(time.Until(l.deadline)-l.stopBefore, func() { end(ErrDeadline) })
	interval := h.cfg.renewInterval // NewRoomContender set the default and checked it fits
	go l.keepRenewed(start, interval, h.log.With("term", l.fence))
	return l
}

// renewed moves the deadline after a renewal that started at start succeeded; false when the
// term had already ended.
func (l *Leadership) renewed(start time.Time, leader Leader) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopAt.Stop() {
		return false // the deadline fired: a late success does not revive the term
	}
	l.leader = leader
	l.deadline = start.Add(timing.Window(l.ttl))
	l.stopAt.Reset(time.Until(l.deadline) - l.stopBefore)
	select {
	case l.renewals <- struct{}{}:
	default:
	}
	return true
}

// keepRenewed renews every interval (shortened by up to a fifth at random) until the term ends,
// retrying failures with back-off until the deadline does.
//
// Renewals are timed from the start of the last confirmed request, the point the deadline is
// measured from, not from its answer: a slow server then eats into the slack once, not twice.
func (l *Leadership) keepRenewed(won time.Time, interval time.Duration, log *slog.Logger) {
	defer close(l.renewing)
	defer l.stopAt.Stop()
	cfg := &l.c.cfg
	jittered := func() time.Duration { return interval - time.Duration(float64(interval/5)*jitter(cfg.jitter)) }
	// Failed renewals are retried well within the interval: a few tries fit before the deadline.
	bo := backoff{min: cfg.minBackoff, max: max(cfg.minBackoff, min(cfg.maxBackoff, interval/4)), jitter: cfg.jitter}
	next := time.NewTimer(time.Until(won.Add(jittered())))
	defer next.Stop()
	failing := false
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-next.C:
		}
		start := time.Now()
		// No attempt outlives the term: past its end, a success could not extend it.
		rctx, cancel := context.WithDeadline(l.ctx, l.Deadline().Add(-l.stopBefore))
		res, err := l.c.Renew(rctx, l.room, l.token, l.ttl)
		cancel()
		if l.ctx.Err() != nil {
			return
		}
		switch {
		case err == nil && (!res.IsLeader() || res.Leader.Term != l.fence):
			// A renewal always answers leader with the same term; anything else is not this term.
			l.end(fmt.Errorf("%w: the renewal answered %s with term %d", ErrLost, res.Status, res.Leader.Term))
			return
		case err == nil:
			if !l.renewed(start, res.Leader) {
				return
			}
			if failing {
				log.Info("swarmlease: renewed after failures", "deadline_in", time.Until(l.Deadline()).Round(time.Millisecond))
			}
			failing = false
			bo.reset()
			next.Reset(time.Until(start.Add(jittered())))
		case errors.Is(err, ErrLeaseNotCurrent), isPermanent(err):
			l.end(fmt.Errorf("%w: %w", ErrLost, err))
			return
		default:
			if !failing {
				log.Warn("swarmlease: renewal failed; retrying until the deadline", "err", err,
					"deadline_in", time.Until(l.Deadline()).Round(time.Millisecond))
			}
			failing = true
			next.Reset(bo.next())
		}
	}
}

// isPermanent reports a server answer that retrying cannot change.
func isPermanent(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && !apiErr.temporary()
}

// jitter returns f() if it is in [0, 1), else 0.
func jitter(f func() float64) float64 {
	if j := f(); j >= 0 && j < 1 {
		return j
	}
	return 0
}
