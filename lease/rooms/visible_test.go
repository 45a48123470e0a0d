package rooms_test

import (
	"context"
	"testing"
)

// TestActivationLockEndsWhenTheWriteIsVisible: an activation whose write the store reports
// visible lets the next activation (another shard) count and write while the first one's write
// has not returned yet — the activation lock is not held until the write is durable.
func TestActivationLockEndsWhenTheWriteIsVisible(t *testing.T) {
	ctx := context.Background()
	store := newHeldStore(true)
	m, first := holdFirstActivation(t, store, 10)
	second := campaignInBackground(ctx, m, roomInShard(m, 1), "b")
	if err := awaitSignal(t, second, "the second activation did not end (the activation lock was still held)"); err != nil {
		t.Fatalf("second activation: %v", err)
	}
	close(store.release)
	if err := <-first; err != nil {
		t.Fatalf("first activation: %v", err)
	}
}
