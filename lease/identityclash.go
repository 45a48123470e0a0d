package lease

import (
	"errors"
	"fmt"
	"log/slog"
)

// ErrIdentityInUse: the store shows a term under this contender's own identity that another
// incarnation holds while this one lives — two processes contend with the same holder id (and
// task id), a misconfiguration. A term ended by it ends with a cause that wraps both ErrLost and
// ErrIdentityInUse.
var ErrIdentityInUse = errors.New("lease: another process contends with this identity")

// errLostToTwin is the cause of a term that another process took under this identity.
var errLostToTwin = fmt.Errorf("%w: %w", ErrLost, ErrIdentityInUse)

// identityClash tells a contender that another live process uses its identity. A term of
// another incarnation under the identity is never taken over while it lives (TryAcquire), so the
// two do not take the lease from each other; it is the predecessor's of a restarted process,
// or a twin's. It is a twin's when it takes this contender's term (lost), or when it is renewed
// while this contender follows it — a predecessor that has stopped renews nothing. Either is
// reported once per term, with the fix.
type identityClash struct {
	// followed is the record of the identity's other incarnation last followed; logged the
	// fence of the twin's term last reported.
	followed Record
	logged   uint64
	log      *slog.Logger
}

// lost reports whether rec, read while this contender held the term fence, is a term that
// another incarnation took under this identity, and reports the clash. An older term is the
// past read back (a store restored from an old snapshot), not a twin's.
func (k *identityClash) lost(rec Record, fence uint64, e *Election) bool {
	if !e.id.holds(rec) || rec.Incarnation == e.incarnation || rec.Fence <= fence {
		return false
	}
	k.report(rec)
	return true
}

// following reports a twin when rec — followed — is a term of another incarnation under this
// identity that has been renewed since it was last followed.
func (k *identityClash) following(rec Record, e *Election) {
	if !rec.Held() || !e.id.holds(rec) || rec.Incarnation == e.incarnation {
		k.followed = Record{}
		return
	}
	prev := k.followed
	k.followed = rec
	if prev.Fence == rec.Fence && prev.Incarnation == rec.Incarnation && rec.RenewedAt.After(prev.RenewedAt) {
		k.report(rec)
	}
}

func (k *identityClash) report(rec Record) {
	if rec.Fence == k.logged {
		return
	}
	k.logged = rec.Fence
	k.log.Error("another live process holds the lease under this contender's identity: two contenders share one holder id. "+
		"Give each its own holder id (--holder-id or SWARM_LEASE_HOLDER_ID; in a Swarm task leave it unset and the task id tells "+
		"replicas apart). Until then this one follows that term as another holder's",
		"holder_id", rec.HolderID, "task_id", rec.TaskID, "their_fence", rec.Fence)
}
