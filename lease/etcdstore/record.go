package etcdstore

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// recordSchema is the layout version of a stored election record; another is never written
// over.
const recordSchema = 1

// storedRecord is an election record as etcd keeps it: the namespace is the key's last segment.
// Times are Unix microseconds, the precision every store keeps.
type storedRecord struct {
	Schema     int    `json:"schema"`
	HolderID   string `json:"holder_id,omitempty"`
	NodeID     string `json:"node_id,omitempty"`
	TaskID     string `json:"task_id,omitempty"`
	Fence      uint64 `json:"fence"`
	AcquiredUs int64  `json:"acquired_us,omitempty"`
	RenewedUs  int64  `json:"renewed_us,omitempty"`
	ExpiresUs  int64  `json:"expires_us,omitempty"`
	TTLMs      int64  `json:"ttl_ms,omitempty"`
	// HandoverFrom and HandoverTo are the record's lease.Handover: a term written by its
	// predecessor for a registered successor. Readers that predate them ignore them and see an
	// ordinary term.
	HandoverFrom uint64 `json:"handover_from,omitempty"`
	HandoverTo   string `json:"handover_to,omitempty"`
	// Incarnation is the holder's lease.Incarnation; readers that predate it ignore it.
	Incarnation string `json:"incarnation,omitempty"`
}

func encodeRecord(r lease.Record) []byte {
	b, err := json.Marshal(storedRecord{Schema: recordSchema, HolderID: r.HolderID, NodeID: r.NodeID, TaskID: r.TaskID,
		Fence: r.Fence, AcquiredUs: micros(r.AcquiredAt), RenewedUs: micros(r.RenewedAt), ExpiresUs: micros(r.ExpiresAt),
		TTLMs: r.TTL.Milliseconds(), HandoverFrom: uint64(r.Handover.From), HandoverTo: r.Handover.To,
		Incarnation: r.Incarnation})
	if err != nil {
		panic("etcd store: encode record: " + err.Error()) // strings and numbers only
	}
	return b
}

func decodeRecord(key, namespace string, data []byte) (lease.Record, error) {
	var s storedRecord
	if err := json.Unmarshal(data, &s); err != nil {
		return lease.Record{}, &lease.CorruptError{Where: fmt.Sprintf("etcd key %q", key),
			Reason: fmt.Sprintf("not an election record (%v); repair or destroy the election", err)}
	}
	if s.Schema != recordSchema {
		return lease.Record{}, &lease.CorruptError{Where: fmt.Sprintf("etcd key %q", key), Field: "schema",
			Value: fmt.Sprint(s.Schema), Reason: fmt.Sprintf("this version reads schema %d only; upgrade lfp-swarm-lease", recordSchema)}
	}
	return lease.Record{Namespace: namespace, HolderID: s.HolderID, NodeID: s.NodeID, TaskID: s.TaskID, Fence: s.Fence,
		AcquiredAt: fromMicros(s.AcquiredUs), RenewedAt: fromMicros(s.RenewedUs), ExpiresAt: fromMicros(s.ExpiresUs),
		TTL: time.Duration(s.TTLMs) * time.Millisecond, Handover: lease.Handover{From: lease.Version(s.HandoverFrom), To: s.HandoverTo},
		Incarnation: s.Incarnation}, nil
}

// micros is t in Unix microseconds; the zero time is 0.
func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}
