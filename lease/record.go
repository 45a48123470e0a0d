package lease

import (
	"fmt"
	"regexp"
	"time"
)

// Record is the stored state of one election.
//
// A record without a holder (HolderID empty) still carries the fence counter, so the next term
// continues above every fence issued before.
type Record struct {
	// Namespace names the election.
	Namespace string
	// HolderID identifies the current holder; empty when nobody holds the lease.
	HolderID string
	// NodeID is the Swarm node of the holder (metadata).
	NodeID string
	// TaskID is the Swarm task of the holder; with HolderID it forms the holder's identity.
	TaskID string
	// Fence is the fencing token of the current (or, without a holder, the last) term.
	Fence uint64
	// AcquiredAt is when the current term started (holder's wall clock).
	AcquiredAt time.Time
	// RenewedAt is the holder's wall clock at its last successful write.
	RenewedAt time.Time
	// ExpiresAt is RenewedAt plus TTL: the wall-clock end of the lease.
	ExpiresAt time.Time
	// TTL is the lease duration the holder recorded; contenders use it, not their own setting.
	TTL time.Duration
	// Handover marks a term its predecessor's holder wrote for a registered successor (zero for
	// a term its holder acquired itself); the holder's first renewal clears it.
	Handover Handover
	// Incarnation is the holder's incarnation (Incarnation.String): which process under the
	// identity holds the term, and what can prove it gone. Empty for a term recorded without.
	Incarnation string
}

// Held reports whether the record names a holder.
func (r Record) Held() bool { return r.HolderID != "" }

// Identity returns the holder's identity.
func (r Record) Identity() Identity {
	return Identity{HolderID: r.HolderID, NodeID: r.NodeID, TaskID: r.TaskID}
}

// Equal reports whether two records hold the same values (times compared as instants).
func (r Record) Equal(o Record) bool {
	return r.Namespace == o.Namespace && r.HolderID == o.HolderID && r.NodeID == o.NodeID &&
		r.TaskID == o.TaskID && r.Fence == o.Fence && r.TTL == o.TTL &&
		r.AcquiredAt.Equal(o.AcquiredAt) && r.RenewedAt.Equal(o.RenewedAt) && r.ExpiresAt.Equal(o.ExpiresAt) &&
		r.Handover == o.Handover && r.Incarnation == o.Incarnation
}

// Version is a store's opaque, increasing version of a record; writes are conditional on it.
type Version uint64

// Identity is who contends. HolderID and TaskID together identify a contender; NodeID is
// metadata carried into the record.
type Identity struct {
	// HolderID defaults to the Swarm node ID.
	HolderID string
	// NodeID is the Swarm node ID (metadata).
	NodeID string
	// TaskID is the Swarm task ID; empty outside Swarm.
	TaskID string
}

// holds reports whether r is held by this identity.
func (id Identity) holds(r Record) bool {
	return r.Held() && r.HolderID == id.HolderID && r.TaskID == id.TaskID
}

// Snapshot is what an observer learns of an election at one moment.
type Snapshot struct {
	// Record is the stored record (zero when the election does not exist).
	Record
	// Version is the store's version of Record.
	Version Version
	// Exists is false when the election has no stored record (never initialised, or destroyed).
	Exists bool
	// Acquired reports whether the election currently has a holder whose lease has not expired
	// by the rules of this Election.
	Acquired bool
}

// Grant is a won or renewed term, as seen by its holder.
type Grant struct {
	// Record is the record this holder wrote.
	Record
	// Version is the store's version of Record.
	Version Version
	// Deadline is the reading of the election's Clock.Monotonic at which the holder must have
	// stopped all leader work, whether or not a renewal has been answered by then.
	Deadline time.Duration
}

// TryAcquireResult is the outcome of TryAcquire.
type TryAcquireResult struct {
	// Acquired reports whether this attempt won the election.
	Acquired bool
	// Grant is the new term when Acquired is true.
	Grant Grant
	// Current is the election as read by the attempt: the winner's record when Acquired, the
	// other holder's otherwise.
	Current Snapshot
	// Evidence, when the attempt took over a live term of another incarnation, is what proved
	// its holder gone (a Witness's answer); empty otherwise.
	Evidence string
}

var namespacePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$`)

// ValidateNamespace checks that a namespace can name an election in every store: 1 to 200
// characters, letters, digits, '_', '.', '-', starting with a letter or digit.
func ValidateNamespace(ns string) error {
	if !namespacePattern.MatchString(ns) {
		return fmt.Errorf("lease: invalid namespace %q: use 1 to 200 letters, digits, '_', '.' or '-', starting with a letter or digit", ns)
	}
	return nil
}

// normalizeTime strips the monotonic reading and location and truncates to the microsecond, the
// precision every store keeps, so that a record read back compares Equal to the one written.
func normalizeTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Round(0).UTC().Truncate(time.Microsecond)
}
