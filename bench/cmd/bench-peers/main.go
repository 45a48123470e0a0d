// Command bench-peers runs the elections workload of BENCHMARKS.md ("Compared with etcd")
// against a real `lfp-swarm-lease serve` process (file and memory stores, default settings)
// and a single-node etcd on loopback, alternating, for several rounds, and prints one table of
// medians and ours / etcd ratios. It then compares graceful handover and crash failover of a
// leader-only child under `lfp-swarm-lease run` (file store) and under etcd-run
// (bench/cmd/etcd-run, the minimal etcd-based supervisor), alternating too — one kind after
// the other in each round, or with -interleave side by side, handover by handover — in a second
// table of ours / etcd ratios (handover.go). scripts/bench-peers.sh builds the binaries, installs
// etcd when missing and runs it.
//
// Every client owns one election and repeats campaign → renew → renew → resign. Each round
// runs every target twice, each time in a fresh process with a fresh data directory: once for
// throughput and latency, once under strace (only the flush system calls traced, through a
// seccomp filter) to count flushes per operation.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// config is the command line.
type config struct {
	// serve is the lfp-swarm-lease binary: `serve` of the throughput targets, `run` of the
	// handover benchmark.
	serve   string
	etcdRun string
	// testchild is the supervised child of the handover benchmark (cli/internal/testchild).
	testchild string
	// handovers, failovers, stops and partitions are the iterations of one handover run.
	handovers  int
	failovers  int
	stops      int
	partitions int
	// ttl is the supervisors' lease TTL (0: defaultTTL).
	ttl time.Duration
	// interleave runs the handover kinds of a round side by side, alternating iterations.
	interleave bool
	etcd       string
	// etcdMembers is the size of the etcd cluster of the etcd targets; etcdArgs are extra
	// arguments of every member.
	etcdMembers int
	etcdArgs    []string
	// serveReplicas is the number of serve processes of rooms-etcd, the clients spread over them.
	serveReplicas int
	// scaleRooms is the room counts of the rooms-scale measurement (rooms.go).
	scaleRooms  []int
	scaleSample int
	strace      string
	rounds      int
	clients     int
	ops         int
	countOps    int
	timeout     time.Duration
	// serveEnv is extra environment of serve (settings other than the defaults, for accounting).
	serveEnv []string
	// only, when set, is the one target to run.
	only string
}

func main() {
	var c config
	flag.StringVar(&c.serve, "serve", "", "the lfp-swarm-lease binary (required)")
	flag.StringVar(&c.etcd, "etcd", "etcd", "the etcd server binary (3.4)")
	flag.IntVar(&c.etcdMembers, "etcd-members", 1, "members of the etcd cluster of the etcd, rooms-etcd and run-etcd targets (loopback)")
	flag.Func("etcd-arg", "an argument added to every etcd member's command line (repeatable), e.g. --quota-backend-bytes=8589934592", func(v string) error {
		c.etcdArgs = append(c.etcdArgs, v)
		return nil
	})
	flag.IntVar(&c.serveReplicas, "serve-replicas", 1, "serve processes of rooms-etcd, on one etcd cluster; the clients are spread over them")
	flag.Func("scale-rooms", "rooms-scale: the active-room counts to measure at, comma-separated, increasing (e.g. 10000,100000,1000000)", func(v string) error {
		for f := range strings.SplitSeq(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 || (len(c.scaleRooms) > 0 && n <= c.scaleRooms[len(c.scaleRooms)-1]) {
				return fmt.Errorf("%q: want increasing positive counts", v)
			}
			c.scaleRooms = append(c.scaleRooms, n)
		}
		return nil
	})
	flag.IntVar(&c.scaleSample, "scale-sample", 2000, "rooms-scale: campaigns of each kind timed at each count")
	flag.StringVar(&c.strace, "strace", "strace", "strace, to count flushes; empty to skip counting")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds; every round runs every target")
	flag.IntVar(&c.clients, "clients", 64, "concurrent clients, one election each")
	flag.IntVar(&c.ops, "ops", 20000, "operations of a throughput run")
	flag.IntVar(&c.countOps, "count-ops", 8000, "operations of a flush-counting run")
	flag.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up after this long")
	flag.Func("serve-env", "NAME=VALUE added to serve's environment (repeatable), e.g. SWARM_LEASE_MAX_ACTIVE_ROOMS=0", func(v string) error {
		c.serveEnv = append(c.serveEnv, v)
		return nil
	})
	flag.StringVar(&c.only, "only", "", "run only these targets, comma-separated (file, memory, etcd; run, etcd-run: handover and failover)")
	flag.StringVar(&c.etcdRun, "etcd-run", "", "the etcd-run binary (bench/cmd/etcd-run), for the handover benchmark")
	flag.StringVar(&c.testchild, "testchild", "", "the supervised child of the handover benchmark (cli/internal/testchild)")
	flag.IntVar(&c.handovers, "handovers", 10, "graceful handovers of a handover run")
	flag.IntVar(&c.failovers, "failovers", 5, "crash failovers of a handover run")
	flag.IntVar(&c.stops, "stops", 0, "SIGSTOPs of the leader's supervisor in a handover run")
	flag.IntVar(&c.partitions, "partitions", 0, "partitions of the leader's supervisor from etcd in a handover run (the etcd kinds)")
	flag.DurationVar(&c.ttl, "ttl", defaultTTL, "the supervisors' lease TTL, whole seconds (etcd's unit)")
	flag.BoolVar(&c.interleave, "interleave", false, "run the handover kinds side by side, alternating their iterations, instead of one after the other")
	flag.Parse()
	if err := c.check(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-peers:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if len(c.scaleRooms) > 0 { // the rooms-scale measurement alone
		if err := runScale(ctx, c, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench-peers:", err)
			os.Exit(1)
		}
		return
	}
	results, err := run(ctx, c)
	if c.selected(throughputNames()...) {
		printTable(os.Stdout, c, results)
	}
	if err == nil {
		var handovers []handoverRun
		handovers, err = runHandovers(ctx, c)
		if c.selected(supervisorNames()...) {
			printHandoverTable(os.Stdout, c, handovers)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-peers:", err)
		os.Exit(1)
	}
}

func (c config) check() error {
	switch {
	case c.serve == "":
		return errors.New("-serve: name the lfp-swarm-lease binary (scripts/bench-peers.sh builds it)")
	case c.rounds < 1 || c.clients < 1 || c.ops < c.clients || c.countOps < c.clients:
		return errors.New("-rounds and -clients must be positive, -ops and -count-ops at least -clients")
	case c.handovers < 0 || c.failovers < 0 || c.stops < 0 || c.partitions < 0 || c.handovers+c.failovers+c.stops+c.partitions == 0:
		return errors.New("-handovers, -failovers, -stops and -partitions must not be negative, and not all 0")
	case c.partitions > 0 && !c.selected("run-etcd", "etcd-run"):
		return errors.New("-partitions: select run-etcd or etcd-run in -only (a file store has no network to cut)")
	case c.ttl < time.Second || c.ttl%time.Second != 0:
		return fmt.Errorf("-ttl %v: want whole seconds, at least 1 s (etcd's leases count in seconds)", c.ttl)
	case c.selected(supervisorNames()...) && (c.etcdRun == "" || c.testchild == ""):
		return errors.New("-etcd-run and -testchild: name the etcd-run and testchild binaries (scripts/bench-peers.sh builds them), or leave run and etcd-run out of -only")
	}
	if c.only != "" {
		known := append(throughputNames(), supervisorNames()...)
		for name := range strings.SplitSeq(c.only, ",") {
			if !slices.Contains(known, name) {
				return fmt.Errorf("-only: unknown target %q; the targets are %s", name, strings.Join(known, ", "))
			}
		}
	}
	return nil
}

// selected reports whether -only selects any of names (every target when -only is empty).
func (c config) selected(names ...string) bool {
	if c.only == "" {
		return true
	}
	return slices.ContainsFunc(strings.Split(c.only, ","), func(n string) bool { return slices.Contains(names, n) })
}

// targets are the systems compared, in the order of the first round; later rounds rotate it.
var targets = []target{fileTarget, memoryTarget, etcdTarget, roomsEtcdTarget}

// run runs every round and returns what it measured, also when it stops early.
func run(ctx context.Context, c config) ([]result, error) {
	var out []result
	for round := range c.rounds {
		for k := range targets {
			t := targets[(k+round)%len(targets)]
			if !c.selected(t.name) {
				continue
			}
			r := result{target: t.name, round: round + 1, load: loadAverage()}
			m, err := measure(ctx, c, t, c.ops, false)
			if err != nil {
				return out, fmt.Errorf("round %d, %s: %w", round+1, t.name, err)
			}
			r.throughput = m
			if c.strace != "" {
				m, err := measure(ctx, c, t, c.countOps, true)
				switch {
				case ctx.Err() != nil:
					return out, ctx.Err()
				case err != nil: // the round's other figures stand; its flushes are left out
					fmt.Fprintf(os.Stderr, "warning: round %d, %s: no flush count: %v\n", round+1, t.name, err)
				default:
					r.flushes, r.counted = m.flushes, m.ops
				}
			}
			fmt.Fprintf(os.Stderr, "round %d %-6s %8.0f ops/s  p50 %6.2f ms  p99 %6.2f ms  %5.0f µs CPU/op  %.3f flushes/op  load %s\n",
				r.round, r.target, r.throughput.opsPerSec(), ms(r.throughput.p(50)), ms(r.throughput.p(99)),
				r.throughput.cpuPerOp(), r.flushesPerOp(), r.load)
			out = append(out, r)
		}
	}
	return out, nil
}

// throughputNames and supervisorNames are the names -only accepts.
func throughputNames() []string { return namesOf(targets, func(t target) string { return t.name }) }

func supervisorNames() []string {
	return namesOf(supervisors, func(s supervisor) string { return s.name })
}

// namesOf returns name(x) for each x of xs.
func namesOf[T any](xs []T, name func(T) string) []string {
	names := make([]string, len(xs))
	for i, x := range xs {
		names[i] = name(x)
	}
	return names
}

// measure starts a fresh process of t (under strace when counting), runs ops operations
// against it, and stops it.
func measure(ctx context.Context, c config, t target, ops int, counting bool) (measurement, error) {
	dir, err := os.MkdirTemp("", "bench-peers-"+t.name+"-")
	if err != nil {
		return measurement{}, err
	}
	defer os.RemoveAll(dir)
	p, err := t.start(ctx, c, dir, counting)
	if err != nil {
		return measurement{}, err
	}
	m, err := p.load(ctx, c.clients, ops)
	if serr := p.proc.stop(); err == nil && serr != nil {
		err = serr
	}
	for _, o := range p.others {
		if serr := o.stop(); err == nil && serr != nil {
			err = serr
		}
	}
	if err == nil && counting {
		m.flushes, err = p.proc.flushes()
	}
	return m, err
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// loadAverage is the host's 1-minute load average as /proc/loadavg gives it, "?" where it
// cannot be read: the machine may be shared, and the figures of a run are read against it.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if fields := strings.Fields(string(data)); err == nil && len(fields) > 0 {
		return fields[0]
	}
	return "?"
}
