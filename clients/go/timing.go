package swarmlease

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidTiming: a Holder's renew interval and stop time do not fit in its TTL. The error is
// a *TimingError, which names the durations.
var ErrInvalidTiming = errors.New("swarmlease: invalid hold timing")

// TimingError is NewHolder's refusal of a renew interval plus stop time that does not fit in
// the TTL minus its safety margin: the term must survive a few failed renewals and still end,
// with its work stopped, before the server may hand the room to anyone else. The fields let a
// caller name its own settings for each duration.
type TimingError struct {
	// TTL is the campaign's TTL.
	TTL time.Duration
	// Window is TTL − SafetyMargin(TTL).
	Window time.Duration
	// RenewInterval (default applied) and StopBefore are the Holder's values.
	RenewInterval, StopBefore time.Duration
}

// Error describes the refusal with the option names.
func (e *TimingError) Error() string {
	return fmt.Sprintf("swarmlease: hold: the renew interval (%v) plus the stop time (%v) must be below the TTL minus its safety margin (%v): lower them or raise the TTL",
		e.RenewInterval, e.StopBefore, e.Window)
}

// Is makes every TimingError match ErrInvalidTiming.
func (e *TimingError) Is(target error) bool { return target == ErrInvalidTiming }
