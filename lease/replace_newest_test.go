package lease_test

import (
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// TestReplaceNewest: the single-slot channel always holds the newest snapshot and the sender
// never blocks, however far behind the reader is.
func TestReplaceNewest(t *testing.T) {
	ch := make(chan lease.Snapshot, 1)
	for fence := uint64(1); fence <= 3; fence++ {
		lease.ReplaceNewest(ch, lease.Snapshot{Record: lease.Record{Fence: fence}})
	}
	if got := <-ch; got.Fence != 3 {
		t.Fatalf("read fence %d, want the newest, 3", got.Fence)
	}
	select {
	case s := <-ch:
		t.Fatalf("a second snapshot %+v was left in the channel", s)
	default:
	}
}
