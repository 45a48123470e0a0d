package lease

import (
	"context"
	"time"
)

// Store keeps election records. It is deliberately small: every rule lives in Election, and every
// store passes the same behavioural suite (package leasetest).
//
// Implementations must be safe for concurrent use. Errors wrap the package's sentinels:
// ErrNotFound, ErrExists, ErrConflict, ErrAmbiguous, ErrUnavailable, ErrNotManager,
// ErrNoQuorum, or a *CorruptError.
type Store interface {
	// Load returns the record of namespace and its version, or ErrNotFound.
	Load(ctx context.Context, namespace string) (Record, Version, error)
	// Create stores the first record of rec.Namespace, or returns ErrExists.
	Create(ctx context.Context, rec Record) (Version, error)
	// Update replaces the record of rec.Namespace if its version is still expected; otherwise
	// ErrConflict (or ErrNotFound when it is gone). ErrAmbiguous means the write may or may not
	// have been applied. On success it returns the version this write created — never a later
	// write's — or 0 when the write was applied but its version cannot be known.
	Update(ctx context.Context, rec Record, expected Version) (Version, error)
	// Delete removes the record of namespace; deleting a missing record is not an error.
	Delete(ctx context.Context, namespace string) error
	// Describe names the store for messages and logs, e.g. "file store /var/lib/lease".
	Describe() string
}

// BlindUpdater is implemented by stores whose Update reads the record back to learn the version
// it wrote, because the write's answer does not say (Swarm: a service update answers without
// the new version index). UpdateBlind is Update without that read: on success it returns 0,
// "applied, version unknown", one store request sooner. A Contender's acquisitions use it — its
// term starts as soon as the write is confirmed, and the term's first renewal reads before it
// writes — while one-shot calls, which report the version, keep Update.
type BlindUpdater interface {
	UpdateBlind(ctx context.Context, rec Record, expected Version) (Version, error)
}

// ClockFencer is implemented by stores whose history can be rolled back as a whole — etcd
// restored from an older snapshot — so that a record reads an older fence than some already
// handed out, with nothing in the store to tell. When ClockFences returns true, every new term's
// fence is at least the deciding contender's wall clock in Unix microseconds: max(fence + 1,
// now), the rule of the rooms' terms (docs/safety.md §7c). Fences then still strictly increase
// but are not contiguous.
type ClockFencer interface {
	ClockFences() bool
}

// Rerouter is implemented by stores of several members that send a request that gets no answer
// to another member (etcd). Reroutes reports whether they do; a Contender then bounds each
// campaign by about its poll interval, and sends an unanswered one again.
type Rerouter interface {
	Reroutes() bool
}

// RequestReporter is implemented by stores that send requests to a server of their own (etcd),
// so that a server of ours can measure them: latency and errors per operation, for metrics.
type RequestReporter interface {
	// OnRequest registers fn, called once for every request sent from now on, when its answer
	// (or failure) has come: the store's name for the operation (etcd: the RPC, "Range",
	// "Txn", "DeleteRange", "Status", …), how long it took, and its error — nil on success,
	// else one wrapping the sentinel that ErrorKind names. It runs on the request's goroutine
	// and must return quickly.
	OnRequest(fn func(op string, took time.Duration, err error))
}
