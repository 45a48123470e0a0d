package swarmstore_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// BenchmarkElection measures try-acquire and renew on the real Swarm (BENCHMARKS.md), with the
// Docker API requests per operation counted at the HTTP transport: reads (GET, HEAD), writes
// (every other method) and their sum.
func BenchmarkElection(b *testing.B) {
	leasetest.RunElectionBenchmarks(b, func(b *testing.B) leasetest.BenchStore {
		var reads, writes atomic.Int64
		store := newStoreWithTransport(b, func(base http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if r.Method == http.MethodGet || r.Method == http.MethodHead {
					reads.Add(1)
				} else {
					writes.Add(1)
				}
				return base.RoundTrip(r)
			})
		})
		return leasetest.BenchStore{
			Store:       store,
			ResetCounts: func() { reads.Store(0); writes.Store(0) },
			ReportCounts: func(b *testing.B, ops int) {
				r, w := float64(reads.Load()), float64(writes.Load())
				b.ReportMetric((r+w)/float64(ops), "api-calls/op")
				b.ReportMetric(r/float64(ops), "reads/op")
				b.ReportMetric(w/float64(ops), "writes/op")
			},
		}
	})
}
