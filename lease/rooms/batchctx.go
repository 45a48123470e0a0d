package rooms

import (
	"context"
	"sync"
	"time"
)

// batchContextReuse is how long the Manager's batches share one context (batchContexts).
const batchContextReuse = 100 * time.Millisecond

// batchContexts hands a Manager's batches the context their store calls run under: no caller's
// cancellation (a batch serves several callers) and a deadline about storeTimeout away. The
// batches that start within batchContextReuse of each other share one, whose deadline is
// therefore between storeTimeout-batchContextReuse and storeTimeout from their start: a context
// with a timer of its own per batch was 8 % of the server's allocations per request, and its
// timer a lock on the runtime's timer heap.
type batchContexts struct {
	// now reads the clock deadlines run on (time.Now; tests set another).
	now func() time.Time

	mu   sync.Mutex
	ctx  context.Context
	made time.Time
}

// get returns the context for a batch starting now.
func (b *batchContexts) get() context.Context {
	now := time.Now
	if b.now != nil {
		now = b.now
	}
	t := now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx == nil || t.Sub(b.made) >= batchContextReuse || t.Before(b.made) {
		ctx, cancel := context.WithDeadline(context.Background(), t.Add(storeTimeout))
		// Never cancelled early: batches still running may use it until its deadline, when its
		// timer releases it.
		_ = cancel
		b.ctx, b.made = ctx, t
	}
	return b.ctx
}
