package lease

import "context"

// Notifier is implemented by stores that can tell promptly when an election's record may have
// changed: Docker's event stream for Swarm, inotify/kqueue for the file store.
//
// Notifications are hints. A missed or spurious one is harmless, because every consumer also
// polls (the Swarm event stream can stall silently).
type Notifier interface {
	// Notify returns a channel that receives a value whenever the record of namespace may have
	// changed, coalesced (capacity 1), until ctx ends; the channel is closed then.
	Notify(ctx context.Context, namespace string) (<-chan struct{}, error)
}

// Signal sends on a coalescing notification channel without blocking; for Notifier
// implementations.
func Signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// WatchedRecords is implemented by Notifiers whose change feed carries the records it announces
// (etcd's watch events), so that a contender can act on a notification without reading.
type WatchedRecords interface {
	// Watched returns the newest record of namespace, and its version, that a notification of
	// this store delivered: committed, but perhaps no longer current.
	Watched(namespace string) (Record, Version, bool)
}
