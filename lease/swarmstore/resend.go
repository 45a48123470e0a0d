package swarmstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/moby/moby/client"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// resendDelay is the shortest time after which a refused anchor write may be the second copy
// of a write whose first copy landed.
//
// A manager that is not the Raft leader passes each write on to the leader. When that
// connection breaks (the leader was killed or cut off), it waits for a new leader, checking
// every 500 ms, and sends the same request again — the same expected version, the same
// labels. If the first copy had committed, the second is refused: "update out of sequence"
// for an update, a name conflict for a create. Taken at its word, that refusal says nothing
// was written, and the engine decides again on a record that already holds its own write: a
// try-acquire starts a second term, a release finds nothing to release. A refusal that comes
// back sooner than the first poll cannot be a second copy, nor can one from a Swarm whose only
// manager is the engine asked (soleManager): it passes nothing on.
const resendDelay = 500 * time.Millisecond

// errOutOfSequence marks the conflict Swarm reports for an update whose expected version is no
// longer the service's.
var errOutOfSequence = errors.New("update out of sequence")

// maybeResent qualifies a conflict (update out of sequence, or a create's name conflict) that
// a write of the anchor got after took ≥ resendDelay: it may be the refusal of a second copy
// whose first landed, so it is ambiguous — the engine then reads the record and recognises its
// own write, or keeps the outcome unknown. It does not wrap lease.ErrConflict or
// lease.ErrExists, which would tell the engine that nothing was written.
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
