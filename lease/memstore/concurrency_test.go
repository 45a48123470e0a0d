package memstore_test

import (
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
)

// TestConcurrency runs 8 goroutine contenders × 200 operations on one memory store and checks
// the history for linearizability (leasetest.RunConcurrencySuite).
func TestConcurrency(t *testing.T) {
	store := memstore.New() // one instance: every contender must see the same records
	leasetest.RunConcurrencySuite(t, func(*testing.T) lease.Store { return store }, leasetest.ConcurrencyConfig{})
}
