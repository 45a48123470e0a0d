package rooms

import (
	"errors"
	"fmt"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// Sentinel errors. Operations wrap them with the operation and the room; callers test them with
// errors.Is. Store failures wrap the lease sentinels instead (lease.ErrUnavailable, …).
var (
	// ErrInvalidRoomID: a room id is not 8–64 characters of [A-Za-z0-9_-] (HTTP 400
	// invalid_input).
	ErrInvalidRoomID = errors.New("rooms: invalid room id")
	// ErrInvalidCandidate: a candidate id is not 1–64 bytes of [A-Za-z0-9._:@-] (HTTP 400
	// invalid_input).
	ErrInvalidCandidate = errors.New("rooms: invalid candidate id")
	// ErrInvalidMetadata: metadata is longer than 1024 characters or not UTF-8 (HTTP 400
	// invalid_input).
	ErrInvalidMetadata = errors.New("rooms: invalid metadata")
	// ErrInvalidTTL: a TTL is not a whole number of seconds from 5 to 300 (HTTP 400
	// invalid_ttl).
	ErrInvalidTTL = errors.New("rooms: invalid ttl")
	// ErrInvalidToken: a leader token is not 43 characters of base64url encoding 256 bits (HTTP
	// 400 invalid_input).
	ErrInvalidToken = errors.New("rooms: malformed leader token")
	// ErrVacant: renew or resign found no live lease in the room — never held, resigned, or
	// expired (HTTP 404 lease_not_current).
	ErrVacant = errors.New("rooms: no current lease in the room")
	// ErrNotCurrent: renew or resign with a token that is not the live leader's; another term
	// holds the room (HTTP 400 lease_not_current).
	ErrNotCurrent = errors.New("rooms: the token is not the current leader's")
	// ErrCapacity: the room cannot become active because a capacity limit is reached (HTTP 409
	// capacity_exceeded). The error is a *CapacityError.
	ErrCapacity = errors.New("rooms: capacity exceeded")
	// ErrShardFull: the room's shard has no room left in its byte budget (see docs/rooms.md). It
	// is also an ErrCapacity.
	ErrShardFull = fmt.Errorf("%w: the room's shard is full", ErrCapacity)
	// ErrTooManyConflicts: a write met a conflicting write on every attempt (HTTP 503 with a
	// retry hint). It also matches lease.ErrTooManyConflicts.
	ErrTooManyConflicts = fmt.Errorf("rooms: %w", lease.ErrTooManyConflicts)
	// ErrNoNotifier: the store cannot notify changes; watchers must poll.
	ErrNoNotifier = errors.New("rooms: the store has no change notifications")
)

// CapacityError reports a campaign refused by a capacity limit. errors.Is(err, ErrCapacity) holds
// for it; errors.Is(err, ErrShardFull) too when the shard's byte budget was the limit.
type CapacityError struct {
	// Active is the number of active rooms counted, when the active-room limit refused.
	Active int
	// Max is the active-room limit.
	Max int
	// RetryAfter is how long until an active room of the counted set can expire at the
	// earliest: a hint for the Retry-After header. It is never below one second.
	RetryAfter time.Duration
	// cause is ErrCapacity or ErrShardFull.
	cause error
}

// Error implements error.
func (e *CapacityError) Error() string {
	if errors.Is(e.cause, ErrShardFull) {
		return fmt.Sprintf("%v (retry in %v)", e.cause, e.RetryAfter)
	}
	return fmt.Sprintf("%v: %d of %d rooms active (retry in %v)", e.cause, e.Active, e.Max, e.RetryAfter)
}

// Unwrap returns ErrCapacity or ErrShardFull.
func (e *CapacityError) Unwrap() error { return e.cause }
