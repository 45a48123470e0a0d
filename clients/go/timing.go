package swarmlease

import "github.com/regbo/lfp-swarm-lease/timing"

// ErrInvalidTiming: a RoomContender's renew interval and stop time do not fit in its TTL. The error
// is a *TimingError, which names the durations.
var ErrInvalidTiming = timing.ErrInvalid

// TimingError is NewRoomContender's refusal of a renew interval plus stop time that does not fit in
// the TTL minus its safety margin: the term must survive a few failed renewals and still end, with
// its work stopped, before the server may hand the room to anyone else. It is the lease's own
// timing rule (the timing module), the same for the engine's lease.Contender; the fields let a
// caller name its own settings for each duration (PollInterval is unused here).
type TimingError = timing.Error
