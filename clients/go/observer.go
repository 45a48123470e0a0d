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
	"net/url"
	"time"
)

// Observer follows one election through the controller endpoints at a base URL. It holds only
// configuration: every Watch and WaitForHolder has connections and de-duplication of its own,
// and an Observer may be used by several goroutines at once.
type Observer struct {
	eventsURL string
	cfg       config
	// sleep waits d or until ctx ends; the back-off tests replace it to record the delays
	// without waiting them.
	sleep func(ctx context.Context, d time.Duration) error
}

// Connect returns an observer of the controller at baseURL (e.g. "http://leases:8080", or the
// Swarm service's VIP; a path prefix of a reverse proxy is kept). It connects nothing yet: a
// Watch does. An invalid URL or option is reported by the first Watch or WaitForHolder, so that
// Connect can be used in a declaration.
func Connect(baseURL string, opts ...Option) *Observer {
	cfg := defaultConfig()
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	events, err := eventsURL(baseURL)
	if err != nil && cfg.err == nil {
		cfg.err = err
	}
	return &Observer{eventsURL: events, cfg: cfg, sleep: sleepCtx}
}

// eventsURL is the URL of GET /v1/events below base.
func eventsURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("swarmlease: invalid base URL %q: %w", base, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("swarmlease: invalid base URL %q: want http:// or https:// and a host", base)
	}
	return u.JoinPath("v1", "events").String(), nil
}

// Watch returns the states of the election, each one different from the one before it: first
// the current state, then every change of holder, fence or liveness.
//
// It waits up to the initial timeout for the first state, retrying failed connections, and
// then yields one error wrapping ErrInitialTimeout and the last failure, and stops. After the
// first state it reconnects forever, with jittered exponential back-off; connection failures
// from then on go to the logger, not to the consumer. A replica replaying the state already
// yielded (after a controller restart, or a reconnect to another replica) yields nothing.
//
// An error is always the last value. The iteration ends without an error when ctx ends or the
// consumer stops ranging; the open connection is closed before Watch returns.
func (o *Observer) Watch(ctx context.Context) iter.Seq2[State, error] {
	return func(yield func(State, error) bool) {
		w := o.newWatch(func(s State) bool { return yield(s, nil) })
		if err := w.run(ctx); err != nil {
			yield(State{}, err)
		}
	}
}

// WaitForHolder returns the first state with a live holder (see State.HasHolder), skipping
// states without one, waiting at most timeout (no limit but ctx when timeout <= 0). Without any
// state within the timeout (or the initial timeout, if shorter) the error wraps
// ErrInitialTimeout; with states but no holder it wraps ErrNoHolder and the last state is
// returned with it. When ctx ends first the error is ctx's.
func (o *Observer) WaitForHolder(ctx context.Context, timeout time.Duration) (State, error) {
	wctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var (
		last       State
		seen, held bool
	)
	w := o.newWatch(func(s State) bool {
		last, seen, held = s, true, s.HasHolder()
		return !held
	})
	err := w.run(wctx)
	switch {
	case held:
		return last, nil
	case err != nil:
		return State{}, err
	case ctx.Err() != nil:
		return last, ctx.Err()
	case !seen:
		// The timeout ended the initial wait before the initial timeout did: report it the
		// same way.
		return State{}, initialTimeoutError(timeout, w.lastErr)
	}
	return last, fmt.Errorf("%w (%v): the last state has none", ErrNoHolder, timeout)
}

func initialTimeoutError(d time.Duration, last error) error {
	if last == nil {
		return fmt.Errorf("%w (%v)", ErrInitialTimeout, d)
	}
	return fmt.Errorf("%w (%v); last error: %w", ErrInitialTimeout, d, last)
}

// Causes of a connection's cancellation, other than the end of the watch.
var (
	errIdle            = errors.New("nothing received within the idle timeout")
	errInitialDeadline = errors.New("the initial timeout passed")
)

// watch is one run of an Observer: its connections, back-off and de-duplication.
type watch struct {
	o    *Observer
	emit func(State) bool

	started bool  // a state was received: the initial wait is over
	last    State // the last state emitted (valid when started)
	stopped bool  // emit returned false
	lastErr error // why the last connection failed
}

func (o *Observer) newWatch(emit func(State) bool) *watch {
	return &watch{o: o, emit: emit}
}

// run connects until ctx ends, the consumer stops, or the initial wait fails.
func (w *watch) run(ctx context.Context) error {
	cfg := &w.o.cfg
	if cfg.err != nil {
		return cfg.err
	}
	log := cfg.logger.With("url", w.o.eventsURL)
	initialCtx, cancel := context.WithTimeout(ctx, cfg.initialTimeout)
	defer cancel()
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
		if delivered {
			bo.reset()
		}
		if !w.started && initialCtx.Err() != nil {
			return initialTimeoutError(cfg.initialTimeout, w.lastErr)
		}
		delay := bo.next()
		var httpErr *HTTPError
		if errors.As(err, &httpErr) && httpErr.RetryAfter > delay {
			// The server knows when it will have room (too_many_clients); max still bounds it.
			delay = min(httpErr.RetryAfter, cfg.maxBackoff)
		}
		log.Warn("swarmlease: event stream failed; reconnecting", "err", err, "delay", delay.Round(time.Millisecond))
		// Before the first state the wait also ends at the initial deadline.
		waitCtx := ctx
		if !w.started {
			waitCtx = initialCtx
		}
		if w.o.sleep(waitCtx, delay) != nil {
			if ctx.Err() != nil {
				return nil
			}
			return initialTimeoutError(cfg.initialTimeout, w.lastErr)
		}
	}
}

// connect runs one connection: it emits the changed states it receives and returns why it
// ended. delivered reports whether it received a state, i.e. whether the connection worked.
func (w *watch) connect(ctx, initialCtx context.Context) (delivered bool, err error) {
	cfg := &w.o.cfg
	connCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopInitial := func() bool { return true }
	if !w.started {
		stopInitial = context.AfterFunc(initialCtx, func() { cancel(errInitialDeadline) })
		defer stopInitial()
	}
	// The idle timer runs from the request on: a replica that accepts the connection but
	// never answers (its store unreachable) is as dead as one that stops sending.
	var idle *time.Timer
	if cfg.idleTimeout > 0 {
		idle = time.AfterFunc(cfg.idleTimeout, func() { cancel(errIdle) })
		defer idle.Stop()
	}
	phase := "no response"
	fail := func(err error) error {
		if cause := context.Cause(connCtx); cause == errIdle || cause == errInitialDeadline {
			return fmt.Errorf("GET %s: %s (%w)", w.o.eventsURL, phase, cause)
		}
		return err
	}

	req, err := http.NewRequestWithContext(connCtx, http.MethodGet, w.o.eventsURL, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := cfg.client.Do(req)
	if err != nil {
		return false, fail(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, httpErrorOf(resp)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return false, fmt.Errorf("GET %s: content type %q, want text/event-stream (is this an lfp-swarm-lease controller?)",
			w.o.eventsURL, resp.Header.Get("Content-Type"))
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
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("GET %s: the server ended the stream", w.o.eventsURL)
			}
			return delivered, fail(err)
		}
		switch ev.name {
		case "current", "change", "message":
		default:
			continue // an event type of a later server version
		}
		var s State
		if err := json.Unmarshal([]byte(ev.data), &s); err != nil {
			// Not a state: the stream cannot be trusted from here on.
			return delivered, fmt.Errorf("GET %s: event %q: invalid state: %w", w.o.eventsURL, ev.name, err)
		}
		delivered = true
		phase = "no data"
		if !w.started {
			w.started = true
			stopInitial()
		} else if !changed(w.last, s) {
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

// sleepCtx waits d, or until ctx ends (then it returns ctx's error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
