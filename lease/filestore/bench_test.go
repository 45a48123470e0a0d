package filestore_test

import (
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// BenchmarkElection measures try-acquire and renew on the file store (BENCHMARKS.md).
func BenchmarkElection(b *testing.B) {
	leasetest.RunElectionBenchmarks(b, func(b *testing.B) leasetest.BenchStore {
		store, err := filestore.New(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		return leasetest.BenchStore{Store: store}
	})
}
