package swarmlease

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"time"
)

// streamWatch is one run of a watch of a server-sent-events endpoint whose every connection
// starts with the complete current state: Observer.Watch and WaitForHolder on GET /v1/events,
// WatchRoom and Hold's follower on GET /elections/{id}/watch. It holds the run's connections,
// back-off, timeouts and de-duplication; T is the state the stream carries. The fields up to
// emit say what to read and whom to hand it; the next ones are where the endpoints' policies
// differ (each constructor says why).
type streamWatch[T any] struct {
	url   string
	cfg   *config
	sleep func(ctx context.Context, d time.Duration) error
	// initialTimeout bounds the wait for the first state; 0: no bound but ctx.
	initialTimeout time.Duration
	// server names what should answer at url, for the error of an answer that is no event
	// stream.
	server string
	// stateEvents are the event types that carry a state; other types, of later server
	// versions, are skipped.
	stateEvents []string
	// decode returns the state an event's data carries, or why the data is none: a value
	// off the contract is never emitted.
	decode func(data []byte) (T, error)
	// same reports whether b shows what a showed: a replay the consumer already has.
	same func(a, b T) bool
	// emit hands a new state to the consumer; false stops the watch.
	emit func(T) bool

	// endOnPermanentAnswer ends the watch with an answer that retrying cannot change (see
	// APIError.temporary) instead of retrying it.
	endOnPermanentAnswer bool
	// capRetryAfter bounds a server's Retry-After by the maximum back-off.
	capRetryAfter bool
	// reconnectLevel and reconnectMsg log each reconnect.
	reconnectLevel slog.Level
	reconnectMsg   string

	started bool  // a state was received: the initial wait is over
	last    T     // the last state emitted (valid when started)
	stopped bool  // emit returned false
	lastErr error // why the last connection failed
}

// Causes of a connection's cancellation, other than the end of the watch.
var (
	errIdle            = errors.New("nothing received within the idle timeout")
	errInitialDeadline = errors.New("the initial timeout passed")
)

// errPermanent marks a failure that ends a watch: retrying cannot change it.
type errPermanent struct{ err error }

func (e errPermanent) Error() string { return e.err.Error() }
func (e errPermanent) Unwrap() error { return e.err }

func initialTimeoutError(d time.Duration, last error) error {
	if last == nil {
		return fmt.Errorf("%w (%v)", ErrInitialTimeout, d)
	}
	return fmt.Errorf("%w (%v); last error: %w", ErrInitialTimeout, d, last)
}

// run connects until ctx ends, the consumer stops, a permanent failure comes, or the initial
// wait fails. It returns the error that ends the watch, or nil when ctx or the consumer did.
func (w *streamWatch[T]) run(ctx context.Context) error {
	cfg := w.cfg
	if cfg.err != nil {
		return cfg.err // an invalid option: Connect leaves it to the first watch to report
	}
	initialCtx := ctx
	if w.initialTimeout > 0 {
		var cancel context.CancelFunc
		initialCtx, cancel = context.WithTimeout(ctx, w.initialTimeout)
		defer cancel()
	}
	log := cfg.logger.With("url", w.url)
	bo := backoff{min: cfg.minBackoff, max: cfg.maxBackoff, jitter: cfg.jitter}
	for {
		delivered, err := w.connect(ctx, initialCtx)
		if w.stopped {
			return nil
		}
		// An attempt cut short (by the initial deadline, or by ctx for WaitForHolder's
		// timeout) says less than a failure before it.
		if w.lastErr == nil || (ctx.Err() == nil && !errors.Is(err, errInitialDeadline)) {
			w.lastErr = err
		}
		if ctx.Err() != nil {
			return nil
		}
		var perm errPermanent
		if errors.As(err, &perm) {
			return perm.err
		}
		if delivered {
			bo.reset()
		}
		if !w.started && initialCtx.Err() != nil {
			return initialTimeoutError(w.initialTimeout, w.lastErr)
		}
		delay := bo.next()
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.RetryAfter > delay {
			delay = apiErr.RetryAfter // the server knows when it will have room
			if w.capRetryAfter {
				delay = min(delay, cfg.maxBackoff)
			}
		}
		log.Log(ctx, w.reconnectLevel, w.reconnectMsg, "err", err, "delay", delay.Round(time.Millisecond))
		// Before the first state the wait also ends at the initial deadline.
		waitCtx := ctx
		if !w.started {
			waitCtx = initialCtx
		}
		if w.sleep(waitCtx, delay) != nil {
			if ctx.Err() != nil {
				return nil
			}
			return initialTimeoutError(w.initialTimeout, w.lastErr)
		}
	}
}

// connect runs one connection: it emits the new states it receives and returns why it ended.
// delivered reports whether it received a state, i.e. whether the connection worked. Until the
// first state of the watch, initialCtx ending ends the connection too.
func (w *streamWatch[T]) connect(ctx, initialCtx context.Context) (delivered bool, err error) {
	cfg := w.cfg
	connCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopInitial := func() bool { return true }
	if !w.started {
		stopInitial = context.AfterFunc(initialCtx, func() { cancel(errInitialDeadline) })
		defer stopInitial()
	}
	// The idle timer runs from the request on: a server that accepts the connection but
	// never answers (its store unreachable) is as dead as one that stops sending.
	var idle *time.Timer
	if cfg.idleTimeout > 0 {
		idle = time.AfterFunc(cfg.idleTimeout, func() { cancel(errIdle) })
		defer idle.Stop()
	}
	phase := "no response"
	fail := func(err error) error {
		if cause := context.Cause(connCtx); cause == errIdle || cause == errInitialDeadline {
			return fmt.Errorf("GET %s: %s (%w)", w.url, phase, cause)
		}
		return err
	}

	req, err := http.NewRequestWithContext(connCtx, http.MethodGet, w.url, nil)
	if err != nil {
		return false, errPermanent{err} // the URL is unusable: no retry can change that
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := cfg.client.Do(req)
	if err != nil {
		return false, fail(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e := apiErrorOf(resp)
		if w.endOnPermanentAnswer && !e.temporary() {
			return false, errPermanent{e}
		}
		return false, e
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return false, fmt.Errorf("GET %s: content type %q, want text/event-stream (is this %s?)",
			w.url, resp.Header.Get("Content-Type"), w.server)
	}
	phase = "connected, but no state event"
	var body io.Reader = resp.Body
	if idle != nil {
		body = &activityReader{r: resp.Body, timer: idle, d: cfg.idleTimeout}
	}
	events := newSSEReader(body)
	for {
		ev, err := events.next()
		if err != nil {
			var tooLarge errEventTooLarge
			switch {
			case errors.Is(err, io.EOF):
				err = fmt.Errorf("GET %s: the server ended the stream", w.url)
			case errors.As(err, &tooLarge):
				// Not from a server of the contract: the stream cannot be trusted from here on.
				err = fmt.Errorf("GET %s: %w", w.url, err)
			}
			return delivered, fail(err)
		}
		if !slices.Contains(w.stateEvents, ev.name) {
			continue // an event type of a later server version
		}
		s, err := w.decode([]byte(ev.data))
		if err != nil {
			// Not a state: the stream cannot be trusted from here on.
			return delivered, fmt.Errorf("GET %s: %s: invalid state: %w", w.url, describeEvent(ev.name, ev.id), err)
		}
		delivered = true
		phase = "no data"
		if !w.started {
			w.started = true
			stopInitial()
		} else if w.same(w.last, s) {
			continue // a replay of what the consumer already has
		}
		w.last = s
		// The consumer's time is not the stream's silence.
		if idle != nil {
			idle.Stop()
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

// activityReader restarts the idle timer whenever data arrives (keep-alive comments included).
type activityReader struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
}

func (a *activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.timer.Reset(a.d)
	}
	return n, err
}
