package swarmstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/moby/moby/client"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// resendDelay is the shortest time after which a refused write may be the second copy
// of a write whose first copy landed.
//
// A manager that is not the Raft leader passes each write on to the leader. When that
// connection breaks (the leader was killed or cut off), it waits for a new leader, checking
// every 500 ms, and sends the same request again — the same expected version, the same
// labels. If the first copy had committed, the second is refused: "update out of sequence"
// for an update, a name conflict for a create. Taken at its word, that refusal says nothing
// was written, and the engine decides again on a record that already holds its own write: a
// try-acquire starts a second term, a release finds nothing to release, a room's resignation
// finds the room vacant. A refusal that comes
// back sooner than the first poll cannot be a second copy, nor can one from a Swarm whose only
// manager is the engine asked (soleManager): it passes nothing on.
const resendDelay = 500 * time.Millisecond

// errOutOfSequence marks the conflict Swarm reports for an update whose expected version is no
// longer the service's.
var errOutOfSequence = errors.New("update out of sequence")

// existsOrResent classifies the name conflict of a create sent at sent: lease.ErrExists, or
// ambiguous when it may be the refusal of a second copy (resent).
func (s *Store) existsOrResent(ctx context.Context, sent time.Time, err error) error {
	if took, ok := s.resent(ctx, sent); ok {
		return maybeResent(took, err)
	}
	return lease.ErrExists
}

// conflictOrResent classifies err, the classified error of an update sent at sent: an
// out-of-sequence conflict that may be the refusal of a second copy (resent) becomes
// ambiguous; anything else is returned as it is.
func (s *Store) conflictOrResent(ctx context.Context, sent time.Time, err error) error {
	if !errors.Is(err, errOutOfSequence) {
		return err
	}
	if took, ok := s.resent(ctx, sent); ok {
		return maybeResent(took, err)
	}
	return err
}

// resent reports whether the refusal of a write sent at sent, answered now, may be that of a
// second copy sent by the manager: it took at least resendDelay, and the engine is not its
// Swarm's only manager.
func (s *Store) resent(ctx context.Context, sent time.Time) (time.Duration, bool) {
	took := time.Since(sent)
	return took, took >= resendDelay && !s.soleManager(ctx)
}

// maybeResent is the ambiguous error of a refusal that took took and may be that of a second
// copy whose first landed. It does not wrap lease.ErrConflict or lease.ErrExists, which would
// tell the engine that nothing was written: the engine reads the record instead, and recognises
// its own write or keeps the outcome unknown.
func maybeResent(took time.Duration, err error) error {
	return fmt.Errorf("%w: refused after %v, so possibly as the second copy of a write that landed "+
		"(a manager re-sends a write when its Raft leader changes): %v", lease.ErrAmbiguous, took.Round(time.Millisecond), err)
}

// soleManager reports whether the engine is its Swarm's only manager, which passes no write on
// and so never sends one twice. A question that fails is a no.
func (s *Store) soleManager(ctx context.Context) bool {
	res, err := s.docker.Info(ctx, client.InfoOptions{})
	return err == nil && res.Info.Swarm.ControlAvailable && res.Info.Swarm.Managers == 1
}
