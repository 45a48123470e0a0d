// Package ctxwait is the fault campaign's one cancellable pause, for poll loops and think times.
// (The lease module's own helper is internal to that module.)
package ctxwait

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends, whose error it then returns.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
