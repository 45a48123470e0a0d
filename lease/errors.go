package lease

import (
	"errors"
	"fmt"
)

// Sentinel errors. Stores and the engine wrap them with the operation and the election; callers
// test them with errors.Is.
var (
	// ErrNotFound: the election has no stored record (no anchor).
	ErrNotFound = errors.New("lease: election not found")
	// ErrExists: Create found a record already there.
	ErrExists = errors.New("lease: election already exists")
	// ErrConflict: a conditional write found another version than expected.
	ErrConflict = errors.New("lease: version conflict")
	// ErrTooManyConflicts: a mutation met a conflict on every one of its attempts.
	ErrTooManyConflicts = errors.New("lease: too many conflicting writes")
	// ErrNotHolder: renew or release by an identity/fence pair that does not hold the lease.
	ErrNotHolder = errors.New("lease: not the holder")
	// ErrAmbiguous: a write timed out or lost its Raft leader and a re-read could not tell
	// whether it was applied.
	ErrAmbiguous = errors.New("lease: write outcome unknown")
	// ErrUnavailable: the store (the Docker engine) cannot be reached.
	ErrUnavailable = errors.New("lease: store unreachable")
	// ErrNotManager: the Docker engine is not a Swarm manager (or not in a Swarm).
	ErrNotManager = errors.New("lease: not a swarm manager")
	// ErrNoQuorum: the store's cluster has no leader (too few Swarm managers or etcd members
	// online): nothing can be written, nor read linearizably.
	ErrNoQuorum = errors.New("lease: the store's cluster has no leader (quorum lost)")
	// ErrStoreFull: the store has no space left (ENOSPC, EDQUOT) for a write; nothing partial
	// was left behind, and the write may succeed once space returns.
	ErrStoreFull = errors.New("lease: store is out of space")
	// ErrPermission: the process may not read or write the store's files (EACCES, EPERM, a
	// read-only file system).
	ErrPermission = errors.New("lease: permission denied by the store")
)

// CorruptError reports stored state that cannot be parsed. Nothing is written over it: an
// operator must repair or destroy it.
type CorruptError struct {
	// Where names the stored object, e.g. `service "lease-demo"` or `file "/var/lib/x.json"`.
	Where string
	// Field names the label or field that is wrong; empty when the whole object is wrong.
	Field string
	// Value is the offending value, quoted in the message.
	Value string
	// Reason says what is wrong and what to do.
	Reason string
}

// Error implements error.
func (e *CorruptError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("lease: %s: %s", e.Where, e.Reason)
	}
	return fmt.Sprintf("lease: %s: %s %q: %s", e.Where, e.Field, e.Value, e.Reason)
}
