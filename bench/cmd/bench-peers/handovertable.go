package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// handoverFigure is one row of the handover table: which latencies of a run it summarises.
type handoverFigure struct {
	name string
	of   func(handoverRun) []time.Duration
}

var handoverFigures = []handoverFigure{
	{"handover: old child's stop → next child's start", func(r handoverRun) []time.Duration { return r.fromStop }},
	{"handover: SIGTERM sent → next child's start", func(r handoverRun) []time.Duration { return r.fromSignal }},
	{"failover: SIGKILL sent → next child's start", func(r handoverRun) []time.Duration { return r.failover }},
	{"SIGSTOP of the supervisor: sent → next child's start", func(r handoverRun) []time.Duration { return r.stops }},
	{"partition of the supervisor from etcd: cut → next child's start", func(r handoverRun) []time.Duration { return r.partitions }},
}

// handoverSummary is the medians over the rounds of one figure of one kind, and the extremes
// of all its values.
type handoverSummary struct {
	p50, p99, fastest, slowest float64
	rounds                     int
}

func summariseHandover(runs []handoverRun, kind string, f handoverFigure) handoverSummary {
	var p50, p99 []float64
	var all []time.Duration
	for _, r := range runs {
		values := f.of(r)
		if r.kind != kind || len(values) == 0 {
			continue
		}
		sorted := slices.Sorted(slices.Values(values))
		p50 = append(p50, ms(nearestRank(sorted, 50)))
		p99 = append(p99, ms(nearestRank(sorted, 99)))
		all = append(all, values...)
	}
	if len(all) == 0 {
		return handoverSummary{}
	}
	return handoverSummary{p50: median(p50), p99: median(p99), fastest: ms(slices.Min(all)), slowest: ms(slices.Max(all)), rounds: len(p50)}
}

// printHandoverTable prints, per figure, both kinds' medians of the rounds' p50 and p99 and
// their ratios ours / etcd, then the overlap of children over every run, as Markdown.
func printHandoverTable(w io.Writer, c config, runs []handoverRun) {
	ratio := func(a, b float64) string {
		if b == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f×", a/b)
	}
	fmt.Fprintf(w, "\n%d supervisors on one election, TTL %v, renew every %v, grace %v; medians of %d rounds of %d handovers, %d failovers, %d stops and %d partitions each (ms)\n\n",
		handoverContenders, c.leaseTTL(), c.renew().Round(time.Millisecond), handoverGrace, c.rounds, c.handovers, c.failovers, c.stops, c.partitions)
	for _, kind := range []string{"run", "run-etcd"} {
		if !slices.ContainsFunc(runs, func(r handoverRun) bool { return r.kind == kind }) {
			continue
		}
		fmt.Fprintf(w, "\n| figure | %[1]s p50 | etcd-run p50 | p50 ours/etcd | %[1]s p99 | etcd-run p99 | p99 ours/etcd | %[1]s min / max | etcd-run min / max |\n", kind)
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, f := range handoverFigures {
			ours, etcd := summariseHandover(runs, kind, f), summariseHandover(runs, "etcd-run", f)
			if ours.rounds == 0 {
				continue // not measured for this kind (a partition of the file store)
			}
			fmt.Fprintf(w, "| %s | %.1f | %.1f | %s | %.1f | %.1f | %s | %.0f / %.0f | %.0f / %.0f |\n", f.name,
				ours.p50, etcd.p50, ratio(ours.p50, etcd.p50), ours.p99, etcd.p99, ratio(ours.p99, etcd.p99),
				ours.fastest, ours.slowest, etcd.fastest, etcd.slowest)
		}
		fmt.Fprintf(w, "| overlap of two children: worst over all runs | %s | %s | | | | | | |\n", overlapCell(runs, kind), overlapCell(runs, "etcd-run"))
		if c.stops > 0 {
			fmt.Fprintf(w, "| SIGSTOP: the stopped leader's child still ran at the next start | %s | %s | | | | | | |\n",
				ranOnCell(runs, kind, handoverRun.stopped), ranOnCell(runs, "etcd-run", handoverRun.stopped))
		}
		if c.partitions > 0 && kind != "run" {
			fmt.Fprintf(w, "| partition: the partitioned leader's child still ran at the next start | %s | %s | | | | | | |\n",
				ranOnCell(runs, kind, handoverRun.partitioned), ranOnCell(runs, "etcd-run", handoverRun.partitioned))
		}
	}
	for _, r := range runs {
		if r.overlap.err != nil {
			for _, p := range strings.Split(r.overlap.err.Error(), "\n") {
				fmt.Fprintf(w, "\nround %d, %s: %s", r.round, r.kind, p)
			}
		}
	}
	fmt.Fprintln(w)
}

// ranOnCell is how many of kind's stopped (or partitioned) leaders' children still ran at the
// next start, of how many: of returns both for one run.
func ranOnCell(runs []handoverRun, kind string, of func(handoverRun) (ranOn, all int)) string {
	ranOn, all := 0, 0
	for _, r := range runs {
		if r.kind == kind {
			n, m := of(r)
			ranOn, all = ranOn+n, all+m
		}
	}
	return fmt.Sprintf("%d of %d", ranOn, all)
}

// stopped is how many of r's stopped leaders' children ran on, of how many stops.
func (r handoverRun) stopped() (ranOn, all int) { return r.ranOn, len(r.stops) }

// partitioned is how many of r's partitioned leaders' children ran on, of how many partitions.
func (r handoverRun) partitioned() (ranOn, all int) { return r.cutRanOn, len(r.partitions) }

// overlapCell is the worst overlap of kind's runs and how many children they checked.
func overlapCell(runs []handoverRun, kind string) string {
	var worst time.Duration
	children, n := 0, 0
	for _, r := range runs {
		if r.kind == kind {
			worst, children, n = max(worst, r.overlap.worst), children+r.overlap.children, n+1
		}
	}
	if n == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f ms (%d children, %d runs)", ms(worst), children, n)
}
