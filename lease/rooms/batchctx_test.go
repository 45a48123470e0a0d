package rooms

import (
	"testing"
	"time"
)

// TestBatchContextsShareADeadline: batches that start within batchContextReuse share one
// context, whose deadline is storeTimeout after the first of them; a later batch (or one after
// the clock stepped back) gets a fresh one; none is cancelled by anything but its deadline.
func TestBatchContextsShareADeadline(t *testing.T) {
	start := time.Now() // the deadlines are real: a clock in the past would end them at once
	now := start
	b := &batchContexts{now: func() time.Time { return now }}

	first := b.get()
	if d, ok := first.Deadline(); !ok || !d.Equal(start.Add(storeTimeout)) {
		t.Fatalf("deadline %v (%v), want %v", d, ok, start.Add(storeTimeout))
	}
	now = start.Add(batchContextReuse - time.Millisecond)
	if b.get() != first {
		t.Fatal("a batch within the reuse window got a context of its own")
	}
	now = start.Add(batchContextReuse)
	second := b.get()
	if second == first {
		t.Fatal("a batch after the reuse window got the old context")
	}
	if d, _ := second.Deadline(); !d.Equal(now.Add(storeTimeout)) {
		t.Fatalf("second deadline %v, want %v", d, now.Add(storeTimeout))
	}
	now = start // the wall clock stepped back
	if b.get() == second {
		t.Fatal("a batch after the clock stepped back got a context made in its future")
	}
	if first.Err() != nil || second.Err() != nil {
		t.Fatalf("contexts ended before their deadline: %v, %v", first.Err(), second.Err())
	}
}
