package lease

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidTiming: a campaign's intervals do not fit in its lease. The error is a
// *TimingError, which names the offending durations.
var ErrInvalidTiming = errors.New("lease: invalid campaign timing")

// TimingError is the timing rule's refusal: the holder's window — the TTL minus its safety
// margin — must leave room for the stop time plus one renewal interval, and every interval must
// be positive, much as client-go requires LeaseDuration > RenewDeadline > RetryPeriod. The
// fields let a caller name its own settings for each duration.
type TimingError struct {
	// TTL is the election's lease duration.
	TTL time.Duration
	// Window is TTL − SafetyMargin(TTL): how long a holder may do leader work after a renewal.
	Window time.Duration
	// RenewInterval, PollInterval and StopBefore are the campaign's values (defaults applied).
	RenewInterval, PollInterval, StopBefore time.Duration
	// NotPositive names the fields that are zero or negative where they must be positive
	// ("RenewInterval", "PollInterval") or negative where they may be zero ("StopBefore");
	// empty when the durations are positive but do not fit in Window.
	NotPositive []string
}

// Error describes the refusal with the campaign's own field names; callers with settings of
// other names build their own message from the fields.
func (e *TimingError) Error() string {
	if len(e.NotPositive) > 0 {
		return fmt.Sprintf("lease: campaign: %v must be positive (StopBefore: not negative)", e.NotPositive)
	}
	return fmt.Sprintf("lease: campaign: the renew interval (%v) plus the stop time (%v) must be below the TTL minus its safety margin (%v): lower them or raise the TTL",
		e.RenewInterval, e.StopBefore, e.Window)
}

// Is makes every TimingError match ErrInvalidTiming.
func (e *TimingError) Is(target error) bool { return target == ErrInvalidTiming }

// CheckTiming applies the timing rule to a lease of ttl renewed every renew, followers polling
// every poll, and terms ending stop before the holder's deadline. It returns a *TimingError or
// nil. NewCampaign applies it; it is exported for callers that check settings before they
// have an election.
func CheckTiming(ttl, renew, poll, stop time.Duration) error {
	e := &TimingError{TTL: ttl, Window: ttl - SafetyMargin(ttl), RenewInterval: renew, PollInterval: poll, StopBefore: stop}
	if renew <= 0 {
		e.NotPositive = append(e.NotPositive, "RenewInterval")
	}
	if poll <= 0 {
		e.NotPositive = append(e.NotPositive, "PollInterval")
	}
	if stop < 0 {
		e.NotPositive = append(e.NotPositive, "StopBefore")
	}
	if len(e.NotPositive) > 0 || stop+renew >= e.Window {
		return e
	}
	return nil
}

// NewCampaign returns the campaign c describes, with its defaults filled in (RenewInterval a
// third of the TTL, PollInterval 1 s, Logger slog.Default()), once the timing rule holds. It
// fails with a *TimingError (matching ErrInvalidTiming) when the intervals do not fit in the
// lease, and when no election is given.
func NewCampaign(c Campaign) (*Campaign, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}
