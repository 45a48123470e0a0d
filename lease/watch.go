package lease

import (
	"context"
	"time"

	"github.com/regbo/lfp-swarm-lease/timing"
)

// Watch observes the election and sends a snapshot on the returned channel first at once and
// then whenever the holder or the fence changes — including a holder whose lease expires
// without any write. Routine renewals (same holder, same fence) are not changes.
//
// It reads the store when the store notifies (Notifier), exactly when the holder's lease may
// expire, and at least every poll interval. Read errors are passed to onError (if set) and
// retried at the next poll. The channel has capacity 1 and always holds the newest snapshot:
// a slow consumer skips intermediate states but never blocks the watch. It is closed when ctx
// ends.
func (e *Election) Watch(ctx context.Context, poll time.Duration, onError func(error)) <-chan Snapshot {
	return e.watch(ctx, poll, onError, Changed)
}

// WatchRecords is Watch that also sends every renewal (a new record with the same holder and
// fence), for consumers that serve the full current record, such as GET /v1/state.
func (e *Election) WatchRecords(ctx context.Context, poll time.Duration, onError func(error)) <-chan Snapshot {
	return e.watch(ctx, poll, onError, func(a, b Snapshot) bool { return Changed(a, b) || !a.Record.Equal(b.Record) })
}

func (e *Election) watch(ctx context.Context, poll time.Duration, onError func(error), differs func(a, b Snapshot) bool) <-chan Snapshot {
	out := make(chan Snapshot, 1)
	go func() {
		defer close(out)
		var notify <-chan struct{}
		if n, ok := e.store.(Notifier); ok {
			if ch, err := n.Notify(ctx, e.namespace); err == nil {
				notify = ch
			} else if onError != nil {
				onError(err)
			}
		}
		var last Snapshot
		sent := false
		wakes := &wakeSpacing{spacing: minWakeSpacing / 5}
		for ctx.Err() == nil {
			wait := poll
			snap, err := e.Inspect(ctx)
			switch {
			case err != nil:
				if onError != nil && ctx.Err() == nil {
					onError(err)
				}
			case !sent || differs(last, snap):
				last, sent = snap, true
				ReplaceNewest(out, snap)
			}
			if err == nil && snap.Acquired {
				wait = min(wait, e.UntilExpiry(snap)+time.Millisecond)
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
			case <-t.C:
			case <-notify:
				if d := wakes.delay(e.clock.Monotonic()); d > 0 {
					_ = timing.Sleep(ctx, d)
				}
			}
			t.Stop()
		}
	}()
	return out
}

// Changed reports whether b is a different state of the election than a for observers: another
// holder (identity), another fence, or the lease gained or lost.
func Changed(a, b Snapshot) bool {
	return a.Exists != b.Exists || a.Acquired != b.Acquired || a.Fence != b.Fence ||
		a.HolderID != b.HolderID || a.TaskID != b.TaskID || a.NodeID != b.NodeID
}

// ReplaceNewest puts s in the single-slot channel ch, dropping an unread older snapshot, so
// that a slow reader always gets the newest state and the sender never blocks (Watch feeds its
// channel this way; a Contender's OnState can feed a server's Snapshots the same way). It
// retries until s is in, which takes one retry when the caller is the channel's only sender.
func ReplaceNewest(ch chan Snapshot, s Snapshot) {
	for {
		select {
		case ch <- s:
			return
		default:
		}
		select {
		case <-ch:
		default:
		}
	}
}
