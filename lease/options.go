package lease

import (
	"errors"
	"fmt"
	"time"

	"github.com/regbo/lfp-swarm-lease/timing"
)

// Defaults of the Election settings (the README's Configuration table lists them).
const (
	// DefaultTTL is the lease duration.
	DefaultTTL = 30 * time.Second
	// DefaultMaxCASRetries is how many conflicting writes one mutation retries.
	DefaultMaxCASRetries = 8
	// DefaultMaxClockSkew is how far apart the wall clocks of holder and contender may be.
	DefaultMaxClockSkew = timing.DefaultMaxClockSkew
	// MinTTL is the shortest accepted lease duration.
	MinTTL = 500 * time.Millisecond
)

// Option configures an Election.
type Option func(*Election)

// WithTTL sets the lease duration this contender records when it acquires or renews (default
// DefaultTTL). It must be at least MinTTL.
func WithTTL(d time.Duration) Option { return func(e *Election) { e.ttl = d } }

// WithMaxCASRetries sets how many times one mutation retries after a conflicting write (default
// DefaultMaxCASRetries). It bounds one call, never how long a supervisor keeps contending.
func WithMaxCASRetries(n int) Option { return func(e *Election) { e.maxCASRetries = n } }

// WithMaxClockSkew sets how far the wall clock of this process may be from the holder's (default
// DefaultMaxClockSkew). A lease counts as expired by wall clock only once the local wall clock
// is past its expiry by more than this; it must be below the TTL.
func WithMaxClockSkew(d time.Duration) Option { return func(e *Election) { e.maxClockSkew = d } }

// CheckClockSkew refuses a clock-skew allowance that is negative or not below the TTL; New
// applies it, and it is exported for callers that check settings before they have an election.
func CheckClockSkew(ttl, skew time.Duration) error { return timing.CheckClockSkew(ttl, skew) }

// DefaultMaxClockSkewFor is the clock-skew allowance for a lease of ttl when none is configured:
// DefaultMaxClockSkew, at most a tenth of the TTL, so that short TTLs work without setting it.
func DefaultMaxClockSkewFor(ttl time.Duration) time.Duration {
	return timing.DefaultMaxClockSkewFor(ttl)
}

// WithClock replaces the system clock, for tests.
func WithClock(c Clock) Option { return func(e *Election) { e.clock = c } }

// validate checks the settings after all options were applied.
func (e *Election) validate() error {
	var errs []error
	if e.store == nil {
		errs = append(errs, errors.New("lease: a store is required"))
	}
	if err := ValidateNamespace(e.namespace); err != nil {
		errs = append(errs, err)
	}
	if e.id.HolderID == "" {
		errs = append(errs, errors.New("lease: the holder ID must not be empty"))
	}
	if e.ttl < MinTTL {
		errs = append(errs, fmt.Errorf("lease: TTL %v is below the minimum %v", e.ttl, MinTTL))
	}
	if e.ttl%time.Millisecond != 0 {
		errs = append(errs, fmt.Errorf("lease: TTL %v must be whole milliseconds (stores keep milliseconds)", e.ttl))
	}
	if e.maxCASRetries < 0 {
		errs = append(errs, fmt.Errorf("lease: max CAS retries %d must not be negative", e.maxCASRetries))
	}
	if err := CheckClockSkew(e.ttl, e.maxClockSkew); err != nil {
		errs = append(errs, err)
	}
	if e.recorder == nil {
		errs = append(errs, errors.New("lease: the recorder must not be nil"))
	}
	if e.clock == nil {
		errs = append(errs, errors.New("lease: the clock must not be nil"))
	}
	return errors.Join(errs...)
}
