package memstore_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
)

// TestConcurrency runs 8 goroutine contenders × 200 operations on one memory store and checks
// the history for linearizability (leasetest.RunConcurrencySuite).
func TestConcurrency(t *testing.T) {
	store := yielding{memstore.New()} // one instance: every contender must see the same records
	leasetest.RunConcurrencySuite(t, func(*testing.T) lease.Store { return store }, leasetest.ConcurrencyConfig{})
}

// yielding hands the processor to another goroutine around every read and write. A memory
// store call takes a microsecond, so without it the contenders' calls barely overlap and the
// window between a mutation's read and its conditional write is almost never hit.
type yielding struct{ lease.Store }

func (s yielding) Load(ctx context.Context, ns string) (lease.Record, lease.Version, error) {
	runtime.Gosched()
	defer runtime.Gosched()
	return s.Store.Load(ctx, ns)
}

func (s yielding) Update(ctx context.Context, rec lease.Record, expected lease.Version) (lease.Version, error) {
	runtime.Gosched()
	defer runtime.Gosched()
	return s.Store.Update(ctx, rec, expected)
}
