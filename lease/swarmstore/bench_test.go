package swarmstore_test

// Benchmarks of the lease engine's try-acquire and renew on a real Swarm (see
// leasetest.SwarmHost: they skip without one). Besides ns/op they report the median and
// 99th-percentile latency of the operations of one benchmark run, in milliseconds ("p50-ms",
// "p99-ms"), and the Docker API requests per operation, counted by the HTTP transport: reads
// (GET, HEAD), writes (every other method) and their sum. See BENCHMARKS.md at the repository
// root for how to run them and what was measured.

import (
	"context"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
)

// benchTTL is far longer than any benchmark run, so that no lease expires while one runs.
const benchTTL = time.Hour

// countingTransport is an http.RoundTripper that counts the requests it passes on to base,
// split into reads (GET, HEAD) and writes (every other method).
type countingTransport struct {
	base          http.RoundTripper
	reads, writes atomic.Int64
}

// RoundTrip implements http.RoundTripper.
func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		t.reads.Add(1)
	default:
		t.writes.Add(1)
	}
	return t.base.RoundTrip(req)
}

// reset sets both counters to zero.
func (t *countingTransport) reset() {
	t.reads.Store(0)
	t.writes.Store(0)
}

// report adds the requests counted since the last reset, per operation of n, to the
// benchmark's results.
func (t *countingTransport) report(b *testing.B, n int) {
	b.Helper()
	if n == 0 {
		return
	}
	reads, writes := float64(t.reads.Load()), float64(t.writes.Load())
	b.ReportMetric((reads+writes)/float64(n), "api-calls/op")
	b.ReportMetric(reads/float64(n), "reads/op")
	b.ReportMetric(writes/float64(n), "writes/op")
}

// newCountingStore connects to the test Swarm like newStore, through a Docker client whose
// HTTP requests are counted. Only unix and tcp (plain HTTP) hosts are supported.
func newCountingStore(b *testing.B) (*swarmstore.Store, *countingTransport) {
	b.Helper()
	host := leasetest.SwarmHost(b)
	u, err := client.ParseHostURL(host)
	if err != nil {
		b.Fatal(err)
	}
	if u.Scheme != "unix" && u.Scheme != "tcp" {
		b.Fatalf("%s: the benchmarks dial unix and tcp hosts only", host)
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	base := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, u.Scheme, u.Host)
		},
		// As the client's default transport: a few idle connections, no compression locally.
		MaxIdleConns:       6,
		IdleConnTimeout:    30 * time.Second,
		DisableCompression: u.Scheme == "unix",
	}
	counter := &countingTransport{base: base}
	// WithHost must come first: it also configures the default client's *http.Transport, and
	// it fails on any other transport, such as countingTransport. WithHTTPClient then replaces
	// that default client; the host, protocol and address WithHost recorded remain.
	docker, err := client.New(
		client.WithHost(host),
		client.WithHTTPClient(&http.Client{Transport: counter, CheckRedirect: client.CheckRedirect}),
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		docker.Close()
		// Close does not reach a transport it did not build.
		base.CloseIdleConnections()
	})
	return swarmstore.New(docker), counter
}

// newBenchElection returns an Election as holder for namespace on store, destroyed when the
// benchmark ends.
func newBenchElection(b *testing.B, store lease.Store, namespace, holder string) *lease.Election {
	b.Helper()
	e, err := lease.New(store, namespace, lease.Identity{HolderID: holder, NodeID: "node-" + holder, TaskID: "task-" + holder},
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

// BenchmarkTryAcquire measures TryAcquire on the Swarm store.
//
//   - reacquire: the holder acquires again; every operation starts a new term (one label
//     write to the anchor service).
//   - held-by-other: another contender holds the lease; every operation is refused after
//     reading the anchor and writes nothing.
//
// The anchor is created and the API version negotiated before the timer and the request
// counters start.
func BenchmarkTryAcquire(b *testing.B) {
	ctx := context.Background()
	b.Run("reacquire", func(b *testing.B) {
		store, counter := newCountingStore(b)
		e := newBenchElection(b, store, leasetest.Namespace(b), "a")
		fence := mustAcquire(b, e).Fence
		counter.reset()
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
		counter.report(b, len(lat))
		lat.report(b)
	})
	b.Run("held-by-other", func(b *testing.B) {
		store, counter := newCountingStore(b)
		ns := leasetest.Namespace(b)
		mustAcquire(b, newBenchElection(b, store, ns, "a"))
		e := newBenchElection(b, store, ns, "b")
		counter.reset()
		var lat latencies
		for b.Loop() {
			lat.time(func() {
				res, err := e.TryAcquire(ctx)
				if err != nil || res.Acquired || res.Current.HolderID != "a" {
					b.Fatalf("try-acquire: %+v, %v; want refused, held by a", res, err)
				}
			})
		}
		counter.report(b, len(lat))
		lat.report(b)
	})
}

// BenchmarkRenew measures the holder renewing its term on the Swarm store (one label write per
// operation; the fence stays).
func BenchmarkRenew(b *testing.B) {
	ctx := context.Background()
	store, counter := newCountingStore(b)
	e := newBenchElection(b, store, leasetest.Namespace(b), "a")
	fence := mustAcquire(b, e).Fence
	counter.reset()
	var lat latencies
	for b.Loop() {
		lat.time(func() {
			g, err := e.Renew(ctx, fence)
			if err != nil || g.Fence != fence {
				b.Fatalf("renew: %+v, %v; want fence %d", g, err, fence)
			}
		})
	}
	counter.report(b, len(lat))
	lat.report(b)
}
