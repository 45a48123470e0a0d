// Package timing is the timing rule of a lease, written once for the engine's contenders
// (lease.NewContender) and for the Go client's (swarmlease's NewContender): how much
// earlier than the TTL a holder's deadline falls (SafetyMargin), that the renewals and the stop
// time fit before it (Check), and how far apart clocks may be (CheckClockSkew); and the one
// cancellable pause of the loops that poll, back off or wait for a wake-up (Sleep). It uses the
// standard library only, so that importing it pulls no store or Docker client into a build.
package timing

import (
	"errors"
	"fmt"
	"time"
)

// SafetyMargin is how much earlier than the TTL a holder's deadline falls: a tenth of the TTL,
// at most two seconds. It absorbs clock-rate differences between the holder and those that
// judge the lease (contenders, or an elections server).
func SafetyMargin(ttl time.Duration) time.Duration {
	return min(ttl/10, 2*time.Second)
}

// Window is how long a holder may do leader work after a renewal: TTL − SafetyMargin(TTL).
func Window(ttl time.Duration) time.Duration { return ttl - SafetyMargin(ttl) }

// ErrInvalid: the intervals do not fit in the lease. The error is an *Error, which names the
// offending durations.
var ErrInvalid = errors.New("invalid lease timing")

// Error is the timing rule's refusal: the holder's window — the TTL minus its safety margin —
// must leave room for the stop time plus one renewal interval, and every interval must be
// positive, much as client-go requires LeaseDuration > RenewDeadline > RetryPeriod. The fields
// let a caller name its own settings for each duration.
type Error struct {
	// TTL is the lease duration.
	TTL time.Duration
	// Window is Window(TTL).
	Window time.Duration
	// RenewInterval, PollInterval and StopBefore are the checked values (defaults applied);
	// PollInterval is zero where there is none (the Go client follows a stream instead).
	RenewInterval, PollInterval, StopBefore time.Duration
	// NotPositive names the fields that are zero or negative where they must be positive
	// ("RenewInterval", "PollInterval") or negative where they may be zero ("StopBefore");
	// empty when the durations are positive but do not fit in Window.
	NotPositive []string
}

// Error describes the refusal with the field names; callers with settings of other names build
// their own message from the fields.
func (e *Error) Error() string {
	if len(e.NotPositive) > 0 {
		return fmt.Sprintf("lease timing: %v must be positive (StopBefore: not negative)", e.NotPositive)
	}
	return fmt.Sprintf("lease timing: the renew interval (%v) plus the stop time (%v) must be below the TTL minus its safety margin (%v): lower them or raise the TTL",
		e.RenewInterval, e.StopBefore, e.Window)
}

// Is makes every *Error match ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Check applies the timing rule to a lease of ttl renewed every renew, whose terms end stop
// before the holder's deadline; poll, when given, is the followers' poll interval, which must
// be positive too. It returns an *Error or nil.
func Check(ttl, renew, stop time.Duration, poll ...time.Duration) error {
	e := &Error{TTL: ttl, Window: Window(ttl), RenewInterval: renew, StopBefore: stop}
	if renew <= 0 {
		e.NotPositive = append(e.NotPositive, "RenewInterval")
	}
	for _, p := range poll {
		e.PollInterval = p
		if p <= 0 {
			e.NotPositive = append(e.NotPositive, "PollInterval")
		}
	}
	if stop < 0 {
		e.NotPositive = append(e.NotPositive, "StopBefore")
	}
	if len(e.NotPositive) > 0 || stop+renew >= e.Window {
		return e
	}
	return nil
}

// DefaultMaxClockSkew is how far apart the wall clocks of a holder and its contenders may be
// unless configured otherwise, for TTLs of ten seconds and more.
const DefaultMaxClockSkew = time.Second

// DefaultMaxClockSkewFor is the clock-skew allowance for a lease of ttl when none is
// configured: DefaultMaxClockSkew, but at most a tenth of the TTL (as the safety margin), so
// that short TTLs such as 1 s work without setting it.
func DefaultMaxClockSkewFor(ttl time.Duration) time.Duration {
	return min(DefaultMaxClockSkew, ttl/10)
}

// CheckClockSkew refuses a clock-skew allowance that is negative or not below the TTL: a lease
// would otherwise never count as expired before another could be written.
func CheckClockSkew(ttl, skew time.Duration) error {
	if skew < 0 || skew >= ttl {
		return fmt.Errorf("lease: max clock skew %v must be at least 0 and below the TTL %v", skew, ttl)
	}
	return nil
}

// The lease durations of the elections API's rooms: whole seconds from MinRoomTTL to
// MaxRoomTTL, as the wire contract's ttl_seconds.
const (
	MinRoomTTL = 5 * time.Second
	MaxRoomTTL = 300 * time.Second
)

// RoomTTLValid reports whether ttl is a lease duration of a room: a whole number of seconds
// from MinRoomTTL to MaxRoomTTL.
func RoomTTLValid(ttl time.Duration) bool {
	return ttl >= MinRoomTTL && ttl <= MaxRoomTTL && ttl%time.Second == 0
}

// DefaultRenewInterval is how often a holder renews unless told otherwise: every third of the
// TTL, so that two renewals can fail and the third still lands before the deadline.
func DefaultRenewInterval(ttl time.Duration) time.Duration { return ttl / 3 }
