package lease

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// resolveAmbiguous reads the record after a write whose outcome is unknown. If the store holds
// exactly what was written, the write happened (settled, at the version read). If it holds
// something else or nothing, the outcome stays unknown (not settled): the write may not have
// landed yet, or it may have landed and been overwritten or removed since. A read-back that
// fails settles the call as failed: its error wraps writeErr (ErrAmbiguous).
func (e *Election) resolveAmbiguous(ctx context.Context, written Record, writeErr error) (Version, bool, error) {
	// The caller's context may be what timed the write out: read back on a fresh one.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ambiguousReadTimeout)
	defer cancel()
	cur, ver, err := e.store.Load(ctx, written.Namespace)
	if errors.Is(err, ErrNotFound) { // a create that has not landed (yet), or a record removed since
		return 0, false, writeErr
	}
	if err != nil {
		return 0, true, fmt.Errorf("%w; reading it back failed too: %w", writeErr, err)
	}
	if cur.Equal(written) {
		return ver, true, nil
	}
	return 0, false, writeErr
}

// ambiguousReadTimeout bounds the read that resolves an ambiguous write. Swarm answers within
// 20 s even while it has no leader (measured on Docker 20.10 managers; docs/reliability.md).
const ambiguousReadTimeout = 25 * time.Second

// unresolvedWrites are the writes of one mutation whose outcome its read-backs could not settle.
// The retry after one is a new conditional write on the version it reads, so at most one of
// them lands on top of that version — but the unsettled one may already have landed and been
// overwritten by another contender (a Swarm write can commit through a new Raft leader while
// the manager that took it is cut off), or land between the read-back and the retry's read.
// So:
//   - a later read that shows exactly an unsettled record means that write landed (landed): for
//     a try-acquire or a release it is the call's outcome, since deciding again would start a
//     second term or find nothing to release; a renew renews again on top of it, so that its
//     deadline counts from a write that has just been confirmed, not from one that blocked;
//   - any other failure of the call — a refusal, too many conflicts, a store error — is not
//     definite: it also wraps ErrAmbiguous (qualify). A renew or release refused this way still
//     wraps ErrNotHolder, since the term it names is over either way.
type unresolvedWrites []unresolvedWrite

// unresolvedWrite is one write whose outcome is unknown.
type unresolvedWrite struct {
	rec   Record
	start time.Duration // the write's start (monotonic), which bounds a grant's deadline
	err   error         // the store's error, wrapping ErrAmbiguous
}

func (u *unresolvedWrites) add(rec Record, start time.Duration, err error) {
	*u = append(*u, unresolvedWrite{rec: rec, start: start, err: err})
}

// landed returns the unsettled write that cur is, if any.
func (u unresolvedWrites) landed(cur Record) (unresolvedWrite, bool) {
	for _, w := range u {
		if cur.Equal(w.rec) {
			return w, true
		}
	}
	return unresolvedWrite{}, false
}

// qualify returns err, or — when a write of this call stayed unsettled and err does not say so
// already — err wrapped together with that write's ErrAmbiguous.
func (u unresolvedWrites) qualify(err error) error {
	if err == nil || len(u) == 0 || errors.Is(err, ErrAmbiguous) {
		return err
	}
	return fmt.Errorf("%w; an earlier write of this call may have been applied: %w", err, u[len(u)-1].err)
}
