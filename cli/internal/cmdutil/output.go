package cmdutil

import (
	"encoding/json"
	"io"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// RecordJSON is the JSON form of a record, shared by every command's output.
type RecordJSON struct {
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

// TimePtr is t, or nil for the zero time (JSON null).
func TimePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// ToRecordJSON is the JSON form of r at version v.
func ToRecordJSON(r lease.Record, v lease.Version) RecordJSON {
	return RecordJSON{
		Namespace: r.Namespace, HolderID: r.HolderID, NodeID: r.NodeID, TaskID: r.TaskID, Fence: r.Fence,
		AcquiredAt: TimePtr(r.AcquiredAt), RenewedAt: TimePtr(r.RenewedAt), ExpiresAt: TimePtr(r.ExpiresAt),
		TTLMillis: r.TTL.Milliseconds(), Version: uint64(v),
	}
}

// ErrorJSON is printed on stdout with --json when a command fails.
type ErrorJSON struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	Exit  int    `json:"exit_code"`
}

// WriteJSON prints v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// FormatTime is t in RFC 3339 (UTC), or "-" for the zero time.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Dash is s, or "-" when it is empty.
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
