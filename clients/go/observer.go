package swarmlease

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"net/url"
	"time"

	"github.com/regbo/lfp-swarm-lease/timing"
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
	return &Observer{eventsURL: events, cfg: cfg, sleep: timing.Sleep}
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

// newWatch returns one run of Watch or WaitForHolder, emitting each changed state.
func (o *Observer) newWatch(emit func(State) bool) *streamWatch[State] {
	return &streamWatch[State]{
		url:            o.eventsURL,
		cfg:            &o.cfg,
		sleep:          o.sleep,
		initialTimeout: o.cfg.initialTimeout,
		server:         "an lfp-swarm-lease controller",
		stateEvents:    []string{"current", "change", "message"},
		decode:         decodeState,
		same:           func(a, b State) bool { return !changed(a, b) },
		emit:           emit,
		// Watch retries every answer (until the initial timeout, then forever): a wrong one
		// comes from a replica or proxy in a bad moment, restarting say, and the Swarm VIP may
		// send the next connection to another replica.
		endOnPermanentAnswer: false,
		// too_many_clients is one replica's limit ("retry later or connect to another
		// replica"), so its Retry-After need not hold the observer longer than a back-off.
		capRetryAfter: true,
		// A controller ends a stream only when it stops or the client lags: worth a warning.
		reconnectLevel: slog.LevelWarn,
		reconnectMsg:   "swarmlease: event stream failed; reconnecting",
	}
}

// decodeState returns the State of an event of GET /v1/events: every field of the contract's
// State is required, the times may be null.
func decodeState(data []byte) (State, error) {
	o, err := parseObject(data)
	if err != nil {
		return State{}, err
	}
	s := State{
		Namespace:  o.str("namespace"),
		Exists:     o.boolean("exists"),
		Acquired:   o.boolean("acquired"),
		HolderID:   o.str("holder_id"),
		NodeID:     o.str("node_id"),
		TaskID:     o.str("task_id"),
		Fence:      o.uint("fence"),
		AcquiredAt: o.timeOrNull("acquired_at"),
		RenewedAt:  o.timeOrNull("renewed_at"),
		ExpiresAt:  o.timeOrNull("expires_at"),
		TTLMillis:  o.int("ttl_ms"),
	}
	if !o.ok() {
		return State{}, *o.err
	}
	return s, nil
}
