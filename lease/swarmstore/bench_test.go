package swarmstore_test

import (
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// BenchmarkElection measures try-acquire and renew on the real Swarm (BENCHMARKS.md), with the
// Docker API requests per operation counted at the HTTP transport: reads (GET, HEAD), writes
// (every other method) and their sum.
func BenchmarkElection(b *testing.B) {
	leasetest.RunElectionBenchmarks(b, func(b *testing.B) leasetest.BenchStore {
		var counts requestCounts
		store := newCountingStore(b, &counts)
		return leasetest.BenchStore{
			Store:       store,
			ResetCounts: func() { counts.reads.Store(0); counts.writes.Store(0) },
			ReportCounts: func(b *testing.B, ops int) {
				r, w := float64(counts.reads.Load()), float64(counts.writes.Load())
				b.ReportMetric((r+w)/float64(ops), "api-calls/op")
				b.ReportMetric(r/float64(ops), "reads/op")
				b.ReportMetric(w/float64(ops), "writes/op")
			},
		}
	})
}
