package memstore_test

import (
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
)

func TestElectionSuite(t *testing.T) {
	leasetest.RunElectionSuite(t, func(*testing.T) lease.Store { return memstore.New() })
}
