package controller

import (
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// State is the election as observers see it: the body of GET /v1/state and the data of every
// event of GET /v1/events.
type State struct {
	Namespace  string     `json:"namespace" doc:"The election's name." example:"consul-controllers"`
	Exists     bool       `json:"exists" doc:"Whether the election has a stored record (false before the first acquisition and after destroy)."`
	Acquired   bool       `json:"acquired" doc:"Whether the election currently has a holder whose lease has not expired."`
	HolderID   string     `json:"holder_id" doc:"The holder's ID (empty without a holder)."`
	NodeID     string     `json:"node_id" doc:"The holder's Swarm node ID."`
	TaskID     string     `json:"task_id" doc:"The holder's Swarm task ID."`
	Fence      uint64     `json:"fence" doc:"The fencing token of the current (or last) term: strictly increasing, never reused."`
	AcquiredAt *time.Time `json:"acquired_at" doc:"When the current term started (holder's clock)."`
	RenewedAt  *time.Time `json:"renewed_at" doc:"The holder's last renewal (holder's clock)."`
	ExpiresAt  *time.Time `json:"expires_at" doc:"When the lease expires unless renewed (holder's clock)."`
	TTLMillis  int64      `json:"ttl_ms" doc:"The lease duration the holder recorded."`
}

// StateOf converts a snapshot.
func StateOf(s lease.Snapshot) State {
	return State{
		Namespace: s.Namespace, Exists: s.Exists, Acquired: s.Acquired,
		HolderID: s.HolderID, NodeID: s.NodeID, TaskID: s.TaskID, Fence: s.Fence,
		AcquiredAt: timePtr(s.AcquiredAt), RenewedAt: timePtr(s.RenewedAt), ExpiresAt: timePtr(s.ExpiresAt),
		TTLMillis: s.TTL.Milliseconds(),
	}
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}
