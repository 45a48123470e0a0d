package cmdutil

import (
	"context"
	"time"
)

// Sleep waits d, or until wake receives (nil: never), or until ctx ends — then it returns ctx's
// error.
func Sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) error {
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
