package swarmlease

import "time"

// State is the election as a controller observes it: the body of GET /v1/state and the data of
// every event of GET /v1/events. Its JSON form is the server's.
type State struct {
	// Namespace is the election's name.
	Namespace string `json:"namespace"`
	// Exists is false before the first acquisition and after the election was destroyed.
	Exists bool `json:"exists"`
	// Acquired reports whether the election has a holder whose lease has not expired.
	Acquired bool `json:"acquired"`
	// HolderID is the holder's ID (empty without a holder).
	HolderID string `json:"holder_id"`
	// NodeID is the holder's Swarm node ID.
	NodeID string `json:"node_id"`
	// TaskID is the holder's Swarm task ID.
	TaskID string `json:"task_id"`
	// Fence is the fencing token of the current (or last) term: strictly increasing, never
	// reused.
	Fence uint64 `json:"fence"`
	// AcquiredAt is when the current term started (holder's clock); nil without a term.
	AcquiredAt *time.Time `json:"acquired_at"`
	// RenewedAt is the holder's last renewal (holder's clock).
	RenewedAt *time.Time `json:"renewed_at"`
	// ExpiresAt is when the lease expires unless renewed (holder's clock).
	ExpiresAt *time.Time `json:"expires_at"`
	// TTLMillis is the lease duration the holder recorded, in milliseconds.
	TTLMillis int64 `json:"ttl_ms"`
}

// HasHolder reports whether the election has a live holder. An expired or released lease may
// still name its last holder, so the holder ID alone does not say that.
func (s State) HasHolder() bool { return s.Acquired && s.HolderID != "" }

// changed reports whether b is another state of the election than a for an observer. Like the
// server's own filter it ignores the timestamps, so that routine renewals are not changes.
func changed(a, b State) bool {
	return a.Exists != b.Exists || a.Acquired != b.Acquired || a.HolderID != b.HolderID ||
		a.NodeID != b.NodeID || a.TaskID != b.TaskID || a.Fence != b.Fence
}
