package swarmlease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"time"
)

// WatchRoom returns the states of a room from GET /elections/{id}/watch: first the current
// state, then every change of leader, term, metadata or expiry (a renewal moves the expiry). A
// frame equal to the one yielded before — the snapshot a reconnect starts with, or a duplicate
// the server sends — yields nothing.
//
// The server ends streams routinely (after their maximum lifetime, when a client lags, on a
// store failure), so WatchRoom reconnects whenever a stream ends or fails, after a jittered
// exponential back-off (WithBackoff) or the server's Retry-After when it is longer. It waits up
// to the initial timeout (WithInitialTimeout) for the first state, then yields one error
// wrapping ErrInitialTimeout and stops. An answer that retrying cannot change — an invalid room
// id (ErrInvalidInput), disabled elections (ErrForbidden), a server without the elections API —
// is yielded as an *HTTPError at once, and stops the watch too. An error is always the last
// value; the iteration ends without one when ctx ends or the consumer stops ranging.
func (c *Elections) WatchRoom(ctx context.Context, roomID string) iter.Seq2[RoomState, error] {
	return func(yield func(RoomState, error) bool) {
		if err := checkRoomID(roomID); err != nil {
			yield(RoomState{}, err)
			return
		}
		w := &roomWatch{c: c, url: c.base.JoinPath("elections", roomID, "watch").String(),
			initial: c.cfg.initialTimeout, emit: func(s RoomState) bool { return yield(s, nil) }}
		if err := w.run(ctx); err != nil {
			yield(RoomState{}, err)
		}
	}
}

// roomWatch is one run of WatchRoom (or of Hold's follower): its connections, back-off and
// de-duplication.
type roomWatch struct {
	c       *Elections
	url     string
	initial time.Duration // 0: no initial timeout
	emit    func(RoomState) bool

	started bool      // a state was received
	last    RoomState // the last state emitted (valid when started)
	stopped bool      // emit returned false
}

// errPermanent marks an answer that ends a watch: retrying cannot change it.
type errPermanent struct{ err error }

func (e errPermanent) Error() string { return e.err.Error() }
func (e errPermanent) Unwrap() error { return e.err }

// run connects until ctx ends, the consumer stops, a permanent answer comes, or the initial
// wait fails.
func (w *roomWatch) run(ctx context.Context) error {
	cfg := &w.c.cfg
	initialCtx := ctx
	if w.initial > 0 {
		var cancel context.CancelFunc
		initialCtx, cancel = context.WithTimeout(ctx, w.initial)
		defer cancel()
	}
	log := cfg.logger.With("url", w.url)
	bo := backoff{min: cfg.minBackoff, max: cfg.maxBackoff, jitter: cfg.jitter}
	var lastErr error
	for {
		delivered, err := w.connect(ctx, initialCtx)
		if w.stopped || ctx.Err() != nil {
			return nil
		}
		var perm errPermanent
		if errors.As(err, &perm) {
			return perm.err
		}
		if lastErr == nil || initialCtx.Err() == nil {
			lastErr = err
		}
		if delivered {
			bo.reset()
		}
		if !w.started && initialCtx.Err() != nil {
			return initialTimeoutError(w.initial, lastErr)
		}
		delay := bo.next()
		var httpErr *HTTPError
		if errors.As(err, &httpErr) && httpErr.RetryAfter > delay {
			delay = httpErr.RetryAfter // the server knows when it will have room
		}
		log.Debug("swarmlease: room watch ended; reconnecting", "err", err, "delay", delay.Round(time.Millisecond))
		waitCtx := ctx
		if !w.started {
			waitCtx = initialCtx
		}
		if w.c.sleep(waitCtx, delay) != nil {
			if ctx.Err() != nil {
				return nil
			}
			return initialTimeoutError(w.initial, lastErr)
		}
	}
}

// connect runs one stream: it emits the new states it receives and returns why it ended.
// delivered reports whether it received a state. Until the first state of the watch,
// initialCtx ending ends the stream too.
func (w *roomWatch) connect(ctx, initialCtx context.Context) (delivered bool, err error) {
	cfg := &w.c.cfg
	connCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopInitial := func() bool { return true }
	if !w.started {
		stopInitial = context.AfterFunc(initialCtx, func() { cancel(errInitialDeadline) })
		defer stopInitial()
	}
	var idle *time.Timer
	if cfg.idleTimeout > 0 {
		idle = time.AfterFunc(cfg.idleTimeout, func() { cancel(errIdle) })
		defer idle.Stop()
	}
	fail := func(err error) error {
		if cause := context.Cause(connCtx); cause == errIdle || cause == errInitialDeadline {
			return fmt.Errorf("GET %s: %w", w.url, cause)
		}
		return err
	}
	req, err := http.NewRequestWithContext(connCtx, http.MethodGet, w.url, nil)
	if err != nil {
		return false, errPermanent{err}
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := cfg.client.Do(req)
	if err != nil {
		return false, fail(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e := httpErrorOf(resp)
		if !e.temporary() {
			return false, errPermanent{e}
		}
		return false, e
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return false, fmt.Errorf("GET %s: content type %q, want text/event-stream", w.url, resp.Header.Get("Content-Type"))
	}
	var body io.Reader = resp.Body
	if idle != nil {
		body = &activityReader{r: resp.Body, timer: idle, d: cfg.idleTimeout}
	}
	events := newSSEReader(body)
	for {
		ev, err := events.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("GET %s: the server ended the stream", w.url)
			}
			return delivered, fail(err)
		}
		if ev.name != "state" && ev.name != "message" {
			continue // an event type of a later server version
		}
		var frame wireRoomState
		if err := json.Unmarshal([]byte(ev.data), &frame); err != nil {
			return delivered, fmt.Errorf("GET %s: invalid state frame: %w", w.url, err)
		}
		s := frame.state()
		delivered = true
		if w.started && sameRoomState(w.last, s) {
			continue
		}
		if !w.started {
			stopInitial()
		}
		w.started, w.last = true, s
		if idle != nil {
			idle.Stop() // the consumer's time is not the stream's silence
		}
		if !w.emit(s) {
			w.stopped = true
			return delivered, nil
		}
		if idle != nil {
			idle.Reset(cfg.idleTimeout)
		}
	}
}

// sameRoomState reports whether b shows what a showed: the same status and leader (candidate,
// metadata, term, expiry). The time left and the observation time are not compared.
func sameRoomState(a, b RoomState) bool {
	if a.Status != b.Status || (a.Leader == nil) != (b.Leader == nil) {
		return false
	}
	if a.Leader == nil {
		return true
	}
	x, y := a.Leader, b.Leader
	return x.CandidateID == y.CandidateID && x.Metadata == y.Metadata && x.Term == y.Term && x.ExpiresAt.Equal(y.ExpiresAt)
}
