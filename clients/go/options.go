package swarmlease

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"
)

// Defaults of an Observer and of a Client.
const (
	// DefaultInitialTimeout is how long Watch waits for the first state: long enough for a
	// controller starting together with its observers.
	DefaultInitialTimeout = 60 * time.Second
	// DefaultMinBackoff is the shortest wait before a reconnect.
	DefaultMinBackoff = 250 * time.Millisecond
	// DefaultMaxBackoff is the longest wait before a reconnect.
	DefaultMaxBackoff = 30 * time.Second
	// DefaultIdleTimeout is how long a stream may stay silent before the observer assumes the
	// connection is dead: three of the server's default 15 s keep-alives.
	DefaultIdleTimeout = 45 * time.Second
	// DefaultRequestTimeout bounds each request of a Client other than a watch.
	DefaultRequestTimeout = 10 * time.Second
)

// Option configures an Observer or a Client; each option says which settings of the
// two it concerns.
type Option func(*config)

// config is the settings of an Observer or Client; defaults are set before the
// options apply.
type config struct {
	client         *http.Client
	requestTimeout time.Duration
	initialTimeout time.Duration
	minBackoff     time.Duration
	maxBackoff     time.Duration
	idleTimeout    time.Duration
	logger         *slog.Logger
	jitter         func() float64
	err            error // the first invalid option
}

func defaultConfig() config {
	return config{
		// No client timeout: it would cut every long-lived stream.
		client:         &http.Client{},
		requestTimeout: DefaultRequestTimeout,
		initialTimeout: DefaultInitialTimeout,
		minBackoff:     DefaultMinBackoff,
		maxBackoff:     DefaultMaxBackoff,
		idleTimeout:    DefaultIdleTimeout,
		logger:         slog.New(discardHandler{}),
		jitter:         rand.Float64,
	}
}

// fail records the first invalid option; Watch reports it.
func (c *config) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("swarmlease: "+format, args...)
	}
}

// WithHTTPClient sets the HTTP client (default: a new http.Client). Its Timeout should be zero:
// a client timeout ends every stream after that long (the observer then reconnects, which works
// but costs a reconnect each time).
func WithHTTPClient(c *http.Client) Option {
	return func(cfg *config) {
		if c == nil {
			cfg.fail("WithHTTPClient: nil client")
			return
		}
		cfg.client = c
	}
}

// WithRequestTimeout bounds each request of a Client — create, campaign, renew,
// resign, status — from sending to the end of the answer (default 10 s). Watch streams are not
// bounded by it; see WithIdleTimeout.
func WithRequestTimeout(d time.Duration) Option {
	return func(cfg *config) {
		if d <= 0 {
			cfg.fail("WithRequestTimeout: %v is not positive", d)
			return
		}
		cfg.requestTimeout = d
	}
}

// WithInitialTimeout sets how long Watch and WatchRoom wait for the first state before they
// yield ErrInitialTimeout (default 60 s).
func WithInitialTimeout(d time.Duration) Option {
	return func(cfg *config) {
		if d <= 0 {
			cfg.fail("WithInitialTimeout: %v is not positive", d)
			return
		}
		cfg.initialTimeout = d
	}
}

// WithBackoff sets the bounds of the wait before a reconnect, and before Hold retries a failed
// campaign (defaults 250 ms and 30 s). After
// the n-th consecutive failure the wait is random between min and min·2^n (at most max): the
// ceiling doubles to back off from a controller that stays away, the spread keeps the clients
// of a restarted controller from all coming back at once, and the count starts again after a
// connection that delivered a state.
func WithBackoff(min, max time.Duration) Option {
	return func(cfg *config) {
		if min <= 0 || max < min {
			cfg.fail("WithBackoff: need 0 < min <= max, got %v and %v", min, max)
			return
		}
		cfg.minBackoff, cfg.maxBackoff = min, max
	}
}

// WithIdleTimeout sets how long a stream may deliver nothing, not even a keep-alive comment,
// before the observer drops it and reconnects (default 45 s; 0 disables the check). It catches
// connections that died without being closed; keep it above the server's keep_alive_ms.
func WithIdleTimeout(d time.Duration) Option {
	return func(cfg *config) {
		if d < 0 {
			cfg.fail("WithIdleTimeout: %v is negative", d)
			return
		}
		cfg.idleTimeout = d
	}
}

// WithLogger logs connection attempts, failures and reconnect delays, and Hold's transitions
// and failed requests (default: nothing is logged). A campaign that keeps failing is logged at
// a bounded rate — at once, then after 5, 10, 20 and 40 s, then once a minute — with the count
// and the last cause. Connection failures are logged, not
// yielded: the observer retries them itself. Leader tokens are never logged.
func WithLogger(l *slog.Logger) Option {
	return func(cfg *config) {
		if l == nil {
			cfg.fail("WithLogger: nil logger")
			return
		}
		cfg.logger = l
	}
}

// WithJitter replaces the random source of the back-off jitter and of Hold's renewal jitter
// (default math/rand/v2's Float64). f must return values in [0, 1); tests pass a fixed value to get exact delays.
func WithJitter(f func() float64) Option {
	return func(cfg *config) {
		if f == nil {
			cfg.fail("WithJitter: nil function")
			return
		}
		cfg.jitter = f
	}
}

// discardHandler drops every record (slog.DiscardHandler needs Go 1.24; this module supports
// Go 1.23, the first with range-over-func iterators).
type discardHandler struct{}

func (discardHandler) Enabled(context.Context, slog.Level) bool  { return false }
func (discardHandler) Handle(context.Context, slog.Record) error { return nil }
func (d discardHandler) WithAttrs([]slog.Attr) slog.Handler      { return d }
func (d discardHandler) WithGroup(string) slog.Handler           { return d }
