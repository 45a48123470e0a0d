package filestore_test

// Benchmarks of the lease engine's try-acquire and renew on the file store. Besides ns/op they
// report the median and 99th-percentile latency of the operations of one benchmark run, in
// milliseconds ("p50-ms", "p99-ms"); see BENCHMARKS.md at the repository root for how to run
// them and what was measured.

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/filestore"
)

// benchTTL is far longer than any benchmark run, so that no lease expires while one runs.
const benchTTL = time.Hour

// newBenchElection returns an Election as holder on a file store in a fresh temporary
// directory (or in dir when it is not empty), destroyed when the benchmark ends.
func newBenchElection(b *testing.B, dir, holder string) *lease.Election {
	b.Helper()
	if dir == "" {
		dir = b.TempDir()
	}
	store, err := filestore.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	e, err := lease.New(store, "bench", lease.Identity{HolderID: holder, NodeID: "node-" + holder, TaskID: "task-" + holder},
		lease.WithTTL(benchTTL))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Destroy(context.Background()) })
	return e
}

// mustAcquire wins the election for e or fails the benchmark.
func mustAcquire(b *testing.B, e *lease.Election) lease.Grant {
	b.Helper()
	res, err := e.TryAcquire(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if !res.Acquired {
		b.Fatalf("%s: not acquired; held by %q", e.Identity().HolderID, res.Current.HolderID)
	}
	return res.Grant
}

// latencies records how long each operation of a benchmark run took.
type latencies []time.Duration

// time runs op once and records its duration.
func (l *latencies) time(op func()) {
	start := time.Now()
	op()
	*l = append(*l, time.Since(start))
}

// report adds the median and the 99th percentile (nearest rank) of the recorded durations, in
// milliseconds, to the benchmark's results.
func (l latencies) report(b *testing.B) {
	b.Helper()
	if len(l) == 0 {
		return
	}
	sorted := slices.Clone(l)
	slices.Sort(sorted)
	b.ReportMetric(percentile(sorted, 50), "p50-ms")
	b.ReportMetric(percentile(sorted, 99), "p99-ms")
}

// percentile returns the p-th percentile of sorted by the nearest-rank method, in milliseconds.
func percentile(sorted []time.Duration, p int) float64 {
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 × n), 1-based
	rank = min(max(rank, 1), len(sorted))
	return float64(sorted[rank-1]) / float64(time.Millisecond)
}

// BenchmarkTryAcquire measures TryAcquire on the file store.
//
//   - reacquire: the holder acquires again; every operation starts a new term (one write).
//   - held-by-other: another contender holds the lease; every operation is refused after one
//     read and writes nothing.
func BenchmarkTryAcquire(b *testing.B) {
	ctx := context.Background()
	b.Run("reacquire", func(b *testing.B) {
		e := newBenchElection(b, "", "a")
		fence := mustAcquire(b, e).Fence
		var lat latencies
		for b.Loop() {
			lat.time(func() {
				res, err := e.TryAcquire(ctx)
				if err != nil || !res.Acquired || res.Grant.Fence != fence+1 {
					b.Fatalf("try-acquire: %+v, %v; want fence %d", res, err, fence+1)
				}
				fence = res.Grant.Fence
			})
		}
		lat.report(b)
	})
	b.Run("held-by-other", func(b *testing.B) {
		dir := b.TempDir()
		holder := newBenchElection(b, dir, "a")
		mustAcquire(b, holder)
		e := newBenchElection(b, dir, "b")
		var lat latencies
		for b.Loop() {
			lat.time(func() {
				res, err := e.TryAcquire(ctx)
				if err != nil || res.Acquired || res.Current.HolderID != "a" {
					b.Fatalf("try-acquire: %+v, %v; want refused, held by a", res, err)
				}
			})
		}
		lat.report(b)
	})
}

// BenchmarkRenew measures the holder renewing its term on the file store (one write per
// operation; the fence stays).
func BenchmarkRenew(b *testing.B) {
	ctx := context.Background()
	e := newBenchElection(b, "", "a")
	fence := mustAcquire(b, e).Fence
	var lat latencies
	for b.Loop() {
		lat.time(func() {
			g, err := e.Renew(ctx, fence)
			if err != nil || g.Fence != fence {
				b.Fatalf("renew: %+v, %v; want fence %d", g, err, fence)
			}
		})
	}
	lat.report(b)
}
