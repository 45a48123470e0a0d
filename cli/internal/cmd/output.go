package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// recordJSON is the JSON form of a record, shared by every command's output.
type recordJSON struct {
	Namespace  string     `json:"namespace"`
	HolderID   string     `json:"holder_id"`
	NodeID     string     `json:"node_id"`
	TaskID     string     `json:"task_id"`
	Fence      uint64     `json:"fence"`
	AcquiredAt *time.Time `json:"acquired_at"`
	RenewedAt  *time.Time `json:"renewed_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	TTLMillis  int64      `json:"ttl_ms"`
	Version    uint64     `json:"version"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func toRecordJSON(r lease.Record, v lease.Version) recordJSON {
	return recordJSON{
		Namespace: r.Namespace, HolderID: r.HolderID, NodeID: r.NodeID, TaskID: r.TaskID, Fence: r.Fence,
		AcquiredAt: timePtr(r.AcquiredAt), RenewedAt: timePtr(r.RenewedAt), ExpiresAt: timePtr(r.ExpiresAt),
		TTLMillis: r.TTL.Milliseconds(), Version: uint64(v),
	}
}

// snapshotJSON is the output of inspect and init.
type snapshotJSON struct {
	recordJSON
	Exists   bool   `json:"exists"`
	Acquired bool   `json:"acquired"`
	Store    string `json:"store"`
}

// tryAcquireJSON is the output of try-acquire.
type tryAcquireJSON struct {
	Acquired         bool        `json:"acquired"`
	Namespace        string      `json:"namespace"`
	Grant            *recordJSON `json:"grant,omitempty"`
	CurrentHolderID  string      `json:"current_holder_id"`
	CurrentNodeID    string      `json:"current_node_id"`
	CurrentTaskID    string      `json:"current_task_id"`
	CurrentFence     uint64      `json:"current_fence"`
	CurrentExpiresAt *time.Time  `json:"current_expires_at"`
}

// errorJSON is printed on stdout with --json when a command fails.
type errorJSON struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	Exit  int    `json:"exit_code"`
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func describeSnapshot(w io.Writer, s lease.Snapshot, store string) {
	if !s.Exists {
		fmt.Fprintf(w, "election %q does not exist (%s)\n", s.Namespace, store)
		return
	}
	state := "no holder"
	switch {
	case s.Acquired:
		state = "held"
	case s.Held():
		state = "expired"
	}
	fmt.Fprintf(w, "election   %s (%s)\nstate      %s\nholder     %s\nnode       %s\ntask       %s\nfence      %d\nacquired   %s\nrenewed    %s\nexpires    %s\nttl        %s\n",
		s.Namespace, store, state, dash(s.HolderID), dash(s.NodeID), dash(s.TaskID), s.Fence,
		formatTime(s.AcquiredAt), formatTime(s.RenewedAt), formatTime(s.ExpiresAt), s.TTL)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
