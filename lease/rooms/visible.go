package rooms

import "context"

// A Manager holds the activation lock from its count of the active rooms until the activating
// write can be seen by every other count. A store whose write becomes visible before it is
// durable — the file store's slot, written into the page cache and then flushed with other
// shards' writes — tells the Manager through the write's context (WrittenVisible), so that
// the lock is released before the flush and the next activation's write can share it. A count
// that sees a write not yet durable errs on the side of refusing: if the write is lost, the
// room was never acknowledged.

type visibleKey struct{}

// withVisible returns ctx carrying fn, which WrittenVisible calls; fn must be safe to call
// more than once.
func withVisible(ctx context.Context, fn func()) context.Context {
	return context.WithValue(ctx, visibleKey{}, fn)
}

// WrittenVisible is called by a Store's UpdateShard once the new document can be read by every
// process using the store, even if it is not durable yet; the Manager then releases its
// activation lock. A store that never calls it keeps the lock held until UpdateShard returns.
func WrittenVisible(ctx context.Context) {
	if fn, ok := ctx.Value(visibleKey{}).(func()); ok {
		fn()
	}
}
