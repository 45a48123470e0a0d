package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// target is one system under test.
type target struct {
	name  string
	start func(ctx context.Context, c config, dir string, counting bool) (*running, error)
}

// running is a started target: its process and how to put the workload on it.
type running struct {
	proc *proc
	// others are its other processes (etcd members, serve replicas), stopped after proc.
	others []*proc
	// load runs ops operations of the workload from clients concurrent clients.
	load func(ctx context.Context, clients, ops int) (measurement, error)
}

// measurement is one run of the workload.
type measurement struct {
	ops     int
	elapsed time.Duration
	latency []time.Duration // sorted
	cpu     time.Duration   // the servers' user + system CPU over the run
	flushes int             // flush calls over the server's life (counting runs)
}

func (m measurement) opsPerSec() float64 { return float64(m.ops) / m.elapsed.Seconds() }

// p returns the q-th percentile latency by the nearest-rank method.
func (m measurement) p(q int) time.Duration { return nearestRank(m.latency, q) }

// nearestRank returns the q-th percentile of sorted by the nearest-rank method: the value of
// rank ⌈q/100 × n⌉ (with 10 values, p99 is the slowest); 0 for no values.
func nearestRank(sorted []time.Duration, q int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (q*len(sorted) + 99) / 100
	return sorted[max(rank-1, 0)]
}

func (m measurement) cpuPerOp() float64 { return float64(m.cpu.Microseconds()) / float64(m.ops) }

// result is what one round measured of one target.
type result struct {
	target     string
	round      int
	throughput measurement
	flushes    int    // flush calls of the counting run
	counted    int    // its operations
	load       string // the host's 1-minute load average when the run began
}

func (r result) flushesPerOp() float64 {
	if r.counted == 0 {
		return 0
	}
	return float64(r.flushes) / float64(r.counted)
}

// summary is the medians over the rounds of one target.
type summary struct {
	opsPerSec, p50, p99, cpu, flushes float64
	rounds                            int
}

func summarise(results []result, name string) summary {
	var ops, p50, p99, cpu, fl []float64
	for _, r := range results {
		if r.target != name {
			continue
		}
		ops = append(ops, r.throughput.opsPerSec())
		p50 = append(p50, ms(r.throughput.p(50)))
		p99 = append(p99, ms(r.throughput.p(99)))
		cpu = append(cpu, r.throughput.cpuPerOp())
		if r.counted > 0 {
			fl = append(fl, r.flushesPerOp())
		}
	}
	return summary{opsPerSec: median(ops), p50: median(p50), p99: median(p99), cpu: median(cpu), flushes: median(fl), rounds: len(ops)}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// printTable prints the medians of every target and the ratios of ours to etcd's, as a
// Markdown table.
func printTable(w io.Writer, c config, results []result) {
	etcd := summarise(results, etcdTarget.name)
	ratio := func(a, b float64) string {
		if b == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f×", a/b)
	}
	fmt.Fprintf(w, "\n%d clients, campaign → renew → renew → resign; medians of %d rounds (%d ops each; flushes from runs of %d ops under strace)\n\n",
		c.clients, c.rounds, c.ops, c.countOps)
	fmt.Fprintln(w, "| target | ops/s | p50 ms | p99 ms | server CPU µs/op | flushes/op | ops/s ours/etcd | p50 ours/etcd | p99 ours/etcd | flushes ours/etcd |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, t := range targets {
		s := summarise(results, t.name)
		if s.rounds == 0 {
			continue
		}
		fmt.Fprintf(w, "| %s | %.0f | %.2f | %.2f | %.0f | %.3f | %s | %s | %s | %s |\n", t.name, s.opsPerSec, s.p50, s.p99, s.cpu, s.flushes,
			ratio(s.opsPerSec, etcd.opsPerSec), ratio(s.p50, etcd.p50), ratio(s.p99, etcd.p99), ratio(s.flushes, etcd.flushes))
	}
}

// sortLatencies merges the clients' latencies into one sorted slice.
func sortLatencies(perClient [][]time.Duration) []time.Duration {
	var all []time.Duration
	for _, l := range perClient {
		all = append(all, l...)
	}
	slices.Sort(all)
	return all
}
