package lease

import (
	"errors"
	"fmt"
	"log/slog"
)

// ErrIdentityInUse: the store shows a term under this contender's own identity that it did not
// take — another process contends with the same holder id (and task id), a misconfiguration. A
// term ended by it ends with a cause that wraps both ErrLost and ErrIdentityInUse.
var ErrIdentityInUse = errors.New("lease: another process contends with this identity")

// errLostToTwin is the cause of a term that another process took under this identity.
var errLostToTwin = fmt.Errorf("%w: %w", ErrLost, ErrIdentityInUse)

// identityClash is a contender's knowledge that another process uses its identity. A try-acquire
// by the identity a live term names takes the term over at once — right for a restarted
// contender and its predecessor's term, wrong for two live processes sharing one identity: each
// would take the lease from the other as soon as it looks, hundreds of times a second. So once
// a contender has seen a term under its identity that it did not take while it held its own,
// it leaves such terms alone — it follows them, as another holder's, until they end — and says
// what to change.
type identityClash struct {
	seen bool
	// looked: the contender has made its first attempt — a term under its identity found then
	// is a predecessor's (a restarted contender), taken over at once; one found later is not.
	looked bool
	// own is the fence of this contender's last term; logged is the other process's term last
	// reported.
	own, logged uint64
	log         *slog.Logger
}

// won records a term this contender took.
func (k *identityClash) won(fence uint64) { k.own = fence }

// yields reports whether a try-acquire must leave rec's term — under this identity — alone:
// every such term newer than the contender's own that appeared after its first attempt. It
// is another process's: the first such term makes the clash known, and is reported.
func (k *identityClash) yields(rec Record) bool {
	if !k.looked || rec.Fence <= k.own {
		return false
	}
	k.seen = true
	k.report(rec, k.log)
	return true
}

// found reports whether rec, read while this contender held the term fence, is a term that
// another process took under this identity — one newer than its own: an older one is its own
// past, read back (a store restored from an old snapshot); the first time, and for every new
// such term, it logs an error naming the identity and the fix.
func (k *identityClash) found(rec Record, fence uint64, id Identity, log *slog.Logger) bool {
	if !id.holds(rec) || rec.Fence <= fence {
		return false
	}
	k.seen = true
	k.report(rec, log)
	return true
}

// following logs, while following, a new term that the other process took under this identity.
func (k *identityClash) following(rec Record, id Identity, log *slog.Logger) {
	if k.seen && rec.Held() && id.holds(rec) && rec.Fence != k.own {
		k.report(rec, log)
	}
}

func (k *identityClash) report(rec Record, log *slog.Logger) {
	if rec.Fence == k.logged {
		return
	}
	k.logged = rec.Fence
	log.Error("another process holds the lease under this contender's identity: two contenders share one holder id. "+
		"Give each its own holder id (--holder-id or SWARM_LEASE_HOLDER_ID; in a Swarm task leave it unset and the task id tells "+
		"replicas apart). Until then this one follows that term instead of taking the lease back",
		"holder_id", rec.HolderID, "task_id", rec.TaskID, "their_fence", rec.Fence)
}
