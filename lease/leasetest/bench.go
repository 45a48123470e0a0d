package leasetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// BenchStore is a store under benchmark, with optional request counting around the timed loop.
type BenchStore struct {
	// Store is the store under benchmark.
	Store lease.Store
	// ResetCounts, when set, runs just before the timed loop (after setup).
	ResetCounts func()
	// ReportCounts, when set, reports what was counted over ops operations.
	ReportCounts func(b *testing.B, ops int)
}

// benchTTL is far longer than any benchmark run, so that no lease expires while one runs.
const benchTTL = time.Hour

// RunElectionBenchmarks measures the engine's operations on a store. Besides ns/op each
// reports the median and 99th percentile (nearest rank) of its operations' latencies in
// milliseconds ("p50-ms", "p99-ms"); BENCHMARKS.md explains the method.
//
//   - TryAcquire/reacquire: the holder acquires again; every operation starts a new term.
//   - TryAcquire/held-by-other: another contender holds the lease; every operation is refused
//     after one read.
//   - Renew: the holder renews its fence.
func RunElectionBenchmarks(b *testing.B, newStore func(b *testing.B) BenchStore) {
	ctx := context.Background()
	b.Run("TryAcquire/reacquire", func(b *testing.B) {
		bs := newStore(b)
		e := benchElection(b, bs.Store, Namespace(b), "a")
		fence := benchAcquire(b, e).Fence
		timeLoop(b, bs, func() {
			res, err := e.TryAcquire(ctx)
			if err != nil || !res.Acquired || res.Grant.Fence != fence+1 {
				b.Fatalf("try-acquire: %+v, %v; want fence %d", res, err, fence+1)
			}
			fence = res.Grant.Fence
		})
	})
	b.Run("TryAcquire/held-by-other", func(b *testing.B) {
		bs := newStore(b)
		ns := Namespace(b)
		benchAcquire(b, benchElection(b, bs.Store, ns, "a"))
		e := benchElection(b, bs.Store, ns, "b")
		timeLoop(b, bs, func() {
			res, err := e.TryAcquire(ctx)
			if err != nil || res.Acquired || res.Current.HolderID != "a" {
				b.Fatalf("try-acquire: %+v, %v; want refused, held by a", res, err)
			}
		})
	})
	b.Run("Renew", func(b *testing.B) {
		bs := newStore(b)
		e := benchElection(b, bs.Store, Namespace(b), "a")
		fence := benchAcquire(b, e).Fence
		timeLoop(b, bs, func() {
			g, err := e.Renew(ctx, fence)
			if err != nil || g.Fence != fence {
				b.Fatalf("renew: %+v, %v; want fence %d", g, err, fence)
			}
		})
	})
}

// timeLoop runs op in the benchmark loop, timing each operation, and reports the latency
// percentiles and the store's counts.
func timeLoop(b *testing.B, bs BenchStore, op func()) {
	b.Helper()
	if bs.ResetCounts != nil {
		bs.ResetCounts()
	}
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		op()
		lat = append(lat, time.Since(start))
	}
	if len(lat) == 0 {
		return
	}
	if bs.ReportCounts != nil {
		bs.ReportCounts(b, len(lat))
	}
	slices.Sort(lat)
	b.ReportMetric(percentileMillis(lat, 50), "p50-ms")
	b.ReportMetric(percentileMillis(lat, 99), "p99-ms")
}

// percentileMillis returns the p-th percentile of sorted by the nearest-rank method, in
// milliseconds.
func percentileMillis(sorted []time.Duration, p int) float64 {
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 × n), 1-based
	rank = min(max(rank, 1), len(sorted))
	return float64(sorted[rank-1]) / float64(time.Millisecond)
}

func benchElection(b *testing.B, store lease.Store, namespace, holder string) *lease.Election {
	b.Helper()
	e, err := lease.New(store, namespace, lease.Identity{HolderID: holder, NodeID: "node-" + holder, TaskID: "task-" + holder},
		lease.WithTTL(benchTTL))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Destroy(context.Background()) })
	return e
}

func benchAcquire(b *testing.B, e *lease.Election) lease.Grant {
	b.Helper()
	res, err := e.TryAcquire(context.Background())
	if err != nil || !res.Acquired {
		b.Fatalf("%s: try-acquire: %+v, %v", e.Identity().HolderID, res, err)
	}
	return res.Grant
}
