package ledger

import (
	"context"
	"errors"
)

// Election is the other half of the fencing rule: which fences the election has issued. A
// writer chooses the fence it sends, so the ledger takes none on its word: a fence above the
// highest the election has issued was made by no leader, and accepting it would refuse every
// real leader's write as stale from then on.
type Election interface {
	// Issued returns the highest fence the election has issued, read late enough to show
	// fence if the election issued it before the call: at least fence then, and below fence
	// only when a view of the election that began long enough after the call still shows it
	// below. It fails with an error wrapping ErrElectionUnknown when it cannot tell in time.
	Issued(ctx context.Context, fence uint64) (uint64, error)
}

// ErrElectionUnknown is returned by Append when the election could not be read in time to tell
// whether a write's fence was issued (the controllers cannot be reached): nothing is recorded,
// and the writer may try again.
var ErrElectionUnknown = errors.New("ledger: the election cannot be read")
