package swarmstore_test

import (
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// TestConcurrency runs 8 goroutine contenders × 200 operations against one anchor service of the
// test Swarm and checks the history for linearizability. Each contender has its own Docker
// client and store, as separate controllers would; the suite destroys the anchor at the end.
// A refused contender thinks for up to 50 ms before its next call: reads of the anchor are much
// cheaper than Raft writes, and without the pause the lease would rarely change hands.
func TestConcurrency(t *testing.T) {
	newStore(t) // skips (or, with CI=true, fails) before anything when there is no test Swarm
	leasetest.RunConcurrencySuite(t, func(t *testing.T) lease.Store { return newStore(t) }, leasetest.ConcurrencyConfig{RefusedPause: 50 * time.Millisecond})
}
