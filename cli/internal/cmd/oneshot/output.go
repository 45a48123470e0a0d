package oneshot

import (
	"fmt"
	"io"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/lease"
)

// The states of an election, as inspect and init print them in text and JSON alike.
const (
	stateHeld    = "held"    // a holder whose lease has not expired
	stateExpired = "expired" // a holder whose lease has expired: anyone may take it
	stateVacant  = "vacant"  // no holder (never held, released, or no election yet)
)

// stateOf names the state of s.
func stateOf(s lease.Snapshot) string {
	switch {
	case s.Acquired:
		return stateHeld
	case s.Exists && s.Held():
		return stateExpired
	}
	return stateVacant
}

// snapshotJSON is the output of inspect, init and renew.
type snapshotJSON struct {
	cmdutil.StateJSON
	// Status is held, expired or vacant, as the text shows it.
	Status string `json:"state"`
	Store  string `json:"store"`
}

// tryAcquireJSON is the output of try-acquire: the new term (grant) when it won, and the
// election as the attempt found it (current), in inspect's field names.
type tryAcquireJSON struct {
	Acquired  bool               `json:"acquired"`
	Namespace string             `json:"namespace"`
	Store     string             `json:"store"`
	Grant     *cmdutil.StateJSON `json:"grant,omitempty"`
	Current   cmdutil.StateJSON  `json:"current"`
	// AvailableAt is when another contender may take the lease over: its expiry plus the
	// tolerated clock skew (null when it is not held by another).
	AvailableAt *time.Time `json:"available_at"`
}

// printSnapshot prints what init and inspect show.
func printSnapshot(o *Options, snap lease.Snapshot, store string) error {
	if o.JSON {
		return cmdutil.WriteJSON(o.IO.Out, snapshotJSON{StateJSON: cmdutil.ToStateJSON(snap.Record, snap.Version, snap.Exists, snap.Acquired),
			Status: stateOf(snap), Store: store})
	}
	describeSnapshot(o.IO.Out, snap, store)
	return nil
}

// describeSnapshot prints the human form of s, naming the store.
func describeSnapshot(w io.Writer, s lease.Snapshot, store string) {
	if !s.Exists {
		fmt.Fprintf(w, "election %q does not exist (%s)\n", s.Namespace, store)
		return
	}
	fmt.Fprintf(w, "election   %s (%s)\nstate      %s\nholder     %s\nnode       %s\ntask       %s\nfence      %d\nacquired   %s\nrenewed    %s\nexpires    %s\nttl        %s\n",
		s.Namespace, store, stateOf(s), cmdutil.Dash(s.HolderID), cmdutil.Dash(s.NodeID), cmdutil.Dash(s.TaskID), s.Fence,
		cmdutil.FormatTime(s.AcquiredAt), cmdutil.FormatTime(s.RenewedAt), cmdutil.FormatTime(s.ExpiresAt), s.TTL)
}
