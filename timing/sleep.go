package timing

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends, whose error it then returns: the one pause of the poll
// loops, back-offs and think times.
func Sleep(ctx context.Context, d time.Duration) error { return SleepOrWake(ctx, d, nil) }

// SleepOrWake is Sleep that a receive from wake (nil: never) also ends, without an error: a
// waiter that a store's notification may wake before its poll interval.
func SleepOrWake(ctx context.Context, d time.Duration, wake <-chan struct{}) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	case <-wake:
	}
	return nil
}
