package cmdutil

import (
	"encoding/json"
	"io"
	"time"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
	"github.com/regbo/lfp-swarm-lease/lease"
)

// StateJSON is an election's state as every command prints it: the controller API's State
// (the body of GET /v1/state, so one type has the field names everywhere) plus the store's
// version of the record.
type StateJSON struct {
	swarmlease.State
	Version uint64 `json:"version"`
}

// TimePtr is t, or nil for the zero time (JSON null).
func TimePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// ToStateJSON is the JSON form of the record r at version v; exists and acquired say whether
// the record is stored and its lease live.
func ToStateJSON(r lease.Record, v lease.Version, exists, acquired bool) StateJSON {
	return StateJSON{State: swarmlease.State{
		Namespace: r.Namespace, Exists: exists, Acquired: acquired, HolderID: r.HolderID, NodeID: r.NodeID, TaskID: r.TaskID, Fence: r.Fence,
		AcquiredAt: TimePtr(r.AcquiredAt), RenewedAt: TimePtr(r.RenewedAt), ExpiresAt: TimePtr(r.ExpiresAt), TTLMillis: r.TTL.Milliseconds(),
	}, Version: uint64(v)}
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
