// Command bench-peers runs the elections workload of BENCHMARKS.md ("Compared with etcd")
// against a real `lfp-swarm-lease serve` process (file and memory stores, default settings)
// and a single-node etcd on loopback, alternating, for several rounds, and prints one table of
// medians and ours / etcd ratios. scripts/bench-peers.sh builds serve, installs etcd when
// missing and runs it.
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
	"strings"
	"syscall"
	"time"
)

// config is the command line.
type config struct {
	serve    string
	etcd     string
	strace   string
	rounds   int
	clients  int
	ops      int
	countOps int
	timeout  time.Duration
	// serveEnv is extra environment of serve (settings other than the defaults, for accounting).
	serveEnv []string
	// only, when set, is the one target to run.
	only string
}

func main() {
	var c config
	flag.StringVar(&c.serve, "serve", "", "the lfp-swarm-lease binary (required)")
	flag.StringVar(&c.etcd, "etcd", "etcd", "the etcd server binary (3.4)")
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
	flag.StringVar(&c.only, "only", "", "run only these targets, comma-separated (file, memory, etcd)")
	flag.Parse()
	if err := c.check(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-peers:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	results, err := run(ctx, c)
	printTable(os.Stdout, c, results)
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
	}
	return nil
}

// targets are the systems compared, in the order of the first round; later rounds rotate it.
var targets = []target{fileTarget, memoryTarget, etcdTarget}

// run runs every round and returns what it measured, also when it stops early.
func run(ctx context.Context, c config) ([]result, error) {
	var out []result
	for round := range c.rounds {
		for k := range targets {
			t := targets[(k+round)%len(targets)]
			if c.only != "" && !slices.Contains(strings.Split(c.only, ","), t.name) {
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
