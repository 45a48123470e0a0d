package lease

import (
	"time"

	"github.com/regbo/lfp-swarm-lease/timing"
)

// ErrInvalidTiming: a contender's intervals do not fit in its lease. The error is a
// *TimingError, which names the offending durations.
var ErrInvalidTiming = timing.ErrInvalid

// TimingError is the timing rule's refusal (the timing module): the holder's window — the TTL minus
// its safety margin — must leave room for the stop time plus one renewal interval, and every
// interval must be positive. The fields let a caller name its own settings for each duration.
type TimingError = timing.Error

// CheckTiming applies the timing rule to a lease of ttl renewed every renew, followers polling
// every poll, and terms ending stop before the holder's deadline. It returns a *TimingError or
// nil. NewContender applies it; it is exported for callers that check settings before they
// have an election.
func CheckTiming(ttl, renew, poll, stop time.Duration) error {
	return timing.Check(ttl, renew, stop, poll)
}

// NewContender returns the contender c describes, with its defaults filled in (RenewInterval a
// third of the TTL, PollInterval 1 s, Logger slog.Default()), once the timing rule holds. It
// fails with a *TimingError (matching ErrInvalidTiming) when the intervals do not fit in the
// lease, and when no election is given.
func NewContender(c Contender) (*Contender, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}
