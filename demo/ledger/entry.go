package ledger

import (
	"errors"
	"fmt"
	"time"
)

// MaxFence is the largest fence the ledger accepts, 2^53-1: the election's fences (the Unix time
// in microseconds at its creation, plus one per term) stay below 2^53, so that JSON readers
// everywhere, JavaScript's included, read them exactly. A larger fence was made by no leader,
// and accepting it would make the ledger refuse every real leader's write from then on.
const MaxFence = 1<<53 - 1

// MaxFieldLen bounds each identity field of a write, so one client cannot grow the file fast.
const MaxFieldLen = 128

// Write is what a worker sends: the fence of its term and who it is.
type Write struct {
	// Fence is the writer's fencing token (SWARM_LEASE_FENCE); it must be positive.
	Fence uint64 `json:"fence"`
	// Holder is the writer's holder ID; it must not be empty.
	Holder string `json:"holder"`
	// Node is the writer's node ID (may be empty).
	Node string `json:"node,omitempty"`
	// Task is the writer's task ID (may be empty).
	Task string `json:"task,omitempty"`
	// WrittenAt is the writer's own clock when it sent the write.
	WrittenAt time.Time `json:"written_at"`
}

// Entry is one write as the ledger recorded it.
type Entry struct {
	Write
	// Seq numbers the ledger's records from 1, accepted and rejected alike.
	Seq uint64 `json:"seq"`
	// ReceivedAt is the ledger's clock when it decided.
	ReceivedAt time.Time `json:"received_at"`
	// Accepted tells whether the write was accepted: its fence issued by the election and at
	// least the highest accepted one.
	Accepted bool `json:"accepted"`
	// Reason says why a write was rejected (empty when accepted; Stale in records of versions
	// that knew no other reason).
	Reason Reason `json:"reason,omitempty"`
	// Highest is the highest accepted fence when a write was rejected as stale: the fence that
	// beat it.
	Highest uint64 `json:"highest,omitempty"`
	// Issued is the highest fence the election had issued when a write was rejected as not
	// issued.
	Issued uint64 `json:"issued,omitempty"`
}

// Reason is why the ledger rejected a write.
type Reason string

const (
	// Stale: the fence is below the highest accepted one — a leader that lost its term.
	Stale Reason = "stale"
	// NotIssued: the fence is above the highest the election has issued — no leader made it.
	NotIssued Reason = "not_issued"
)

// ErrInvalidWrite is returned for a write without a fence or holder, or with an oversized field.
var ErrInvalidWrite = errors.New("ledger: invalid write")

// ErrInUse is returned by Open when another process (or another Open in this one) has the
// ledger's directory open: two servers on one file would each append at the end they know and
// lose the other's acknowledged writes. The error names the holder as its lock file records it.
var ErrInUse = errors.New("ledger: in use")

// ErrDamaged is returned by Open when a record before the file's torn tail cannot be parsed,
// or holds a fence above MaxFence.
var ErrDamaged = errors.New("ledger: damaged file")

func (w Write) validate() error {
	if w.Fence == 0 {
		return fmt.Errorf("%w: fence must be a positive integer (the writer's SWARM_LEASE_FENCE)", ErrInvalidWrite)
	}
	if w.Fence > MaxFence {
		return fmt.Errorf("%w: fence %d is above %d (2^53-1), the largest the election issues", ErrInvalidWrite, w.Fence, uint64(MaxFence))
	}
	if w.Holder == "" {
		return fmt.Errorf("%w: holder must not be empty", ErrInvalidWrite)
	}
	for name, v := range map[string]string{"holder": w.Holder, "node": w.Node, "task": w.Task} {
		if len(v) > MaxFieldLen {
			return fmt.Errorf("%w: %s is %d bytes, at most %d", ErrInvalidWrite, name, len(v), MaxFieldLen)
		}
	}
	return nil
}
