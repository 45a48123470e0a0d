package swarmstore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// Label keys on the anchor service. Every key carries this prefix; other labels on the anchor
// are preserved untouched.
const (
	LabelPrefix   = "lfp-swarm-lease."
	labelAnchor   = LabelPrefix + "anchor"
	labelNS       = LabelPrefix + "namespace"
	labelHolder   = LabelPrefix + "holder_id"
	labelNode     = LabelPrefix + "node_id"
	labelTask     = LabelPrefix + "task_id"
	labelFence    = LabelPrefix + "fence"
	labelAcquired = LabelPrefix + "acquired_at"
	labelRenewed  = LabelPrefix + "renewed_at"
	labelExpires  = LabelPrefix + "expires_at"
	labelTTL      = LabelPrefix + "ttl_ms"
	// labelIncarnation holds the holder's lease.Incarnation; a version that predates it
	// ignores it.
	labelIncarnation = LabelPrefix + "incarnation"

	// anchorSchema is the value of the anchor label: the layout version of the labels.
	anchorSchema = "1"
	// maxServiceName is Swarm's limit on a service name.
	maxServiceName = 63
	anchorSuffix   = "-lease"
)

var invalidServiceChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// AnchorName returns the name of the zero-replica service that stores the election namespace:
// the namespace with "-lease" appended. A namespace that is not a valid Swarm service name as it
// is ('.' in it, or too long) is shortened and made unique with a hash of the full namespace;
// the anchor's namespace label always holds the full name.
func AnchorName(namespace string) string { return serviceName(namespace, anchorSuffix) }

// serviceName is namespace + suffix, or, when that is not a valid Swarm service name, the
// namespace shortened and made unique with a hash of it, then suffix.
func serviceName(namespace, suffix string) string {
	name := namespace + suffix
	clean := invalidServiceChars.ReplaceAllString(namespace, "-")
	if clean == namespace && len(name) <= maxServiceName {
		return name
	}
	sum := sha256.Sum256([]byte(namespace))
	hash := hex.EncodeToString(sum[:6])
	keep := maxServiceName - len(suffix) - len(hash) - 1
	clean = strings.TrimRight(clean[:min(len(clean), keep)], "-_")
	return clean + "-" + hash + suffix
}

// encode writes rec into labels (which keeps any other labels it has).
func encode(rec lease.Record, labels map[string]string) map[string]string {
	if labels == nil {
		labels = map[string]string{}
	}
	labels[labelAnchor] = anchorSchema
	labels[labelNS] = rec.Namespace
	labels[labelHolder] = rec.HolderID
	labels[labelNode] = rec.NodeID
	labels[labelTask] = rec.TaskID
	labels[labelFence] = strconv.FormatUint(rec.Fence, 10)
	labels[labelAcquired] = formatTime(rec.AcquiredAt)
	labels[labelRenewed] = formatTime(rec.RenewedAt)
	labels[labelExpires] = formatTime(rec.ExpiresAt)
	labels[labelTTL] = strconv.FormatInt(rec.TTL.Milliseconds(), 10)
	if rec.Incarnation != "" {
		labels[labelIncarnation] = rec.Incarnation
	} else {
		delete(labels, labelIncarnation)
	}
	return labels
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// decode reads the record of namespace from the labels of service. Anything it cannot parse
// is a *lease.CorruptError naming the service and the label, and nothing is written over it.
func decode(service, namespace string, labels map[string]string) (lease.Record, error) {
	where := fmt.Sprintf("service %q", service)
	corrupt := func(label, value, reason string) error {
		return &lease.CorruptError{Where: where, Field: "label " + label, Value: value, Reason: reason}
	}
	if v, ok := labels[labelAnchor]; !ok {
		return lease.Record{}, &lease.CorruptError{Where: where, Reason: fmt.Sprintf(
			"the service exists but is not a lease anchor (no label %s); choose another namespace — it is never modified", labelAnchor)}
	} else if v != anchorSchema {
		return lease.Record{}, corrupt(labelAnchor, v, "unknown anchor layout; upgrade lfp-swarm-lease or destroy the election")
	}
	if v := labels[labelNS]; v != namespace {
		return lease.Record{}, corrupt(labelNS, v, fmt.Sprintf("the anchor belongs to another election than %q; choose another namespace", namespace))
	}
	rec := lease.Record{
		Namespace: namespace,
		HolderID:  labels[labelHolder],
		NodeID:    labels[labelNode],
		TaskID:    labels[labelTask],

		Incarnation: labels[labelIncarnation],
	}
	fence, err := strconv.ParseUint(labels[labelFence], 10, 64)
	if err != nil {
		return lease.Record{}, corrupt(labelFence, labels[labelFence], "must be an unsigned decimal integer; restore it or destroy the election")
	}
	rec.Fence = fence
	for _, f := range []struct {
		label string
		into  *time.Time
	}{{labelAcquired, &rec.AcquiredAt}, {labelRenewed, &rec.RenewedAt}, {labelExpires, &rec.ExpiresAt}} {
		v := labels[f.label]
		if v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return lease.Record{}, corrupt(f.label, v, "must be an RFC 3339 time or empty; restore it or destroy the election")
		}
		*f.into = t
	}
	ttl, err := strconv.ParseInt(labels[labelTTL], 10, 64)
	if err != nil || ttl < 0 || (rec.Held() && ttl == 0) {
		return lease.Record{}, corrupt(labelTTL, labels[labelTTL], "must be a positive number of milliseconds; restore it or destroy the election")
	}
	rec.TTL = time.Duration(ttl) * time.Millisecond
	return rec, nil
}
