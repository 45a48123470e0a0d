package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/timing"
)

// The handover benchmark runs a leader-only child under three contending supervisors on one
// election — ours (`lfp-swarm-lease run` on the file store) or etcd-run (bench/cmd/etcd-run, on
// a single-node etcd) — and measures, as cli/e2e's BenchmarkRunHandoverFile and
// BenchmarkRunFailoverFile do:
//
//   - handover: SIGTERM of the leader's supervisor, which stops its child and gives the election
//     up; the old child's stop → the next child's start, and SIGTERM sent → the next start;
//   - failover: SIGKILL of the leader's supervisor, whose child its guard (ours) or the kernel's
//     parent-death signal (etcd-run) then stops; SIGKILL sent → the next child's start — once
//     the dead leader's lease has expired, or, for ours, once nothing holds the dead run's
//     incarnation lock (its guard and child are gone: evidence on this host);
//   - stop (-stops): SIGSTOP of the leader's supervisor alone, which renews no more; SIGSTOP sent
//     → the next child's start, once its lease has expired, and whether the stopped leader's
//     child still ran then (its last heartbeat came after that start): ours is stopped by its
//     guard at the deadline, etcd-run's runs on for as long as etcd-run stays stopped;
//   - partition (-partitions, the etcd kinds): the leader's supervisor cut off from every etcd
//     member (partition.go), it and its child left running; the cut → the next child's start,
//     and whether the partitioned leader's child still ran then.
//
// The children are cli/internal/testchild, which log start and stop with their own wall-clock
// times; a stopped contender is replaced by a new one.

// Timings of both kinds: those of cli/e2e's run benchmarks (run_test.go's fileRunEnv), the TTL
// unless -ttl says otherwise.
const (
	defaultTTL    = 2 * time.Second
	handoverGrace = 300 * time.Millisecond
	handoverPoll  = 100 * time.Millisecond
	handoverSkew  = 100 * time.Millisecond
)

// leaseTTL is both kinds' lease TTL (-ttl, defaultTTL when unset).
func (c config) leaseTTL() time.Duration {
	if c.ttl == 0 {
		return defaultTTL
	}
	return c.ttl
}

// renew is both kinds' renew interval: our default TTL/3, and the interval at which etcd's
// client keeps a session's lease alive (TTL/3).
func (c config) renew() time.Duration { return c.leaseTTL() / 3 }

// handoverContenders is how many supervisors contend at once.
const handoverContenders = 3

// handoverWarmup is how long a new contender gets to start and join the election before the next
// leader is stopped, so that every iteration has all its contenders campaigning.
const handoverWarmup = time.Second

// supervisor is one kind of supervisor compared.
type supervisor struct {
	name string
	// open starts what the contenders of one run share, in dir, and returns how to start them.
	open func(ctx context.Context, c config, dir, childLog string) (*election, error)
}

// election is what one run's contenders share.
type election struct {
	// contender starts one supervisor of the child as holder.
	contender func(holder string) (*proc, error)
	// partition cuts holder off from the store (partition.go); nil for a store without a
	// network (the file store).
	partition func(holder string) error
	// close stops what open started.
	close func() error
}

// supervisors are the kinds compared, in the order of the first round; later rounds rotate it.
var supervisors = []supervisor{
	{name: "run", open: openRunElection},
	{name: "etcd-run", open: openEtcdElection},
	{name: "run-etcd", open: openRunEtcdElection},
}

// openRunElection: `lfp-swarm-lease run -- testchild` on a file store in dir.
func openRunElection(_ context.Context, c config, dir, childLog string) (*election, error) {
	store := "file://" + filepath.Join(dir, "store")
	return runElection(c, dir, childLog, func(string) (string, error) { return store, nil }, nil, func() error { return nil }), nil
}

// openRunEtcdElection: `lfp-swarm-lease run -- testchild` on a fresh etcd (-etcd-members) in
// dir, the same kind of cluster as etcd-run's.
func openRunEtcdElection(ctx context.Context, c config, dir, childLog string) (*election, error) {
	members, endpoints, err := startEtcdCluster(ctx, c, dir, false)
	if err != nil {
		return nil, err
	}
	ls := newLinks(endpoints)
	store := func(holder string) (string, error) {
		hosts, err := ls.open(holder)
		return "etcd://" + strings.Join(hosts, ",") + "/bench", err
	}
	return runElection(c, dir, childLog, store, ls.partition, func() error {
		ls.close()
		stopAll(members)
		return nil
	}), nil
}

// runElection is the election of `run` contenders on the store that store names for a holder;
// partition cuts a holder off from it (nil: it cannot be cut), and closeStore stops what the
// store needs.
func runElection(c config, dir, childLog string, store func(holder string) (string, error), partition func(string) error, closeStore func() error) *election {
	env := []string{
		"SWARM_LEASE_NAMESPACE=bench-handover",
		"SWARM_LEASE_TTL_MS=" + strconv.FormatInt(c.leaseTTL().Milliseconds(), 10),
		"SWARM_LEASE_SHUTDOWN_TIMEOUT_MS=" + strconv.FormatInt(handoverGrace.Milliseconds(), 10),
		"SWARM_LEASE_DEFAULT_POLL_MS=" + strconv.FormatInt(handoverPoll.Milliseconds(), 10),
		"SWARM_LEASE_MAX_CLOCK_SKEW_MS=" + strconv.FormatInt(handoverSkew.Milliseconds(), 10),
		"SWARM_LEASE_LISTEN=127.0.0.1:0", // each process serves its API on a port of its own
		"HOSTNAME=bench-peers",           // no container: the identity comes from the environment
		"XDG_RUNTIME_DIR=" + dir,         // the incarnation locks, removed with the run
	}
	env = append(env, childEnv(c, dir, childLog)...)
	return &election{
		contender: func(holder string) (*proc, error) {
			s, err := store(holder)
			if err != nil {
				return nil, err
			}
			return startProc(c, dir, false, c.serve, []string{"run", "--", c.testchild}, append([]string{"SWARM_LEASE_HOLDER_ID=" + holder, "SWARM_LEASE_STORE=" + s}, env...))
		},
		partition: partition,
		close:     closeStore,
	}
}

// openEtcdElection: a fresh single-node etcd in dir and `etcd-run -- testchild` contenders with
// a session TTL equal to ours. etcd-run hands the fence to the child in the variable testchild
// logs; the holder variable is only the benchmark's label of the contender, which the child
// inherits.
func openEtcdElection(ctx context.Context, c config, dir, childLog string) (*election, error) {
	members, endpoints, err := startEtcdCluster(ctx, c, dir, false)
	if err != nil {
		return nil, err
	}
	ls := newLinks(endpoints)
	return &election{
		contender: func(holder string) (*proc, error) {
			addrs, err := ls.open(holder)
			if err != nil {
				return nil, err
			}
			for i := range addrs {
				addrs[i] = "http://" + addrs[i]
			}
			return startProc(c, dir, false, c.etcdRun, []string{
				"-endpoints", strings.Join(addrs, ","), "-election", "/bench/handover", "-value", holder,
				"-ttl", strconv.Itoa(int(c.leaseTTL() / time.Second)), "-grace", handoverGrace.String(),
				"-fence-env", "SWARM_LEASE_FENCE", "--", c.testchild,
			}, append([]string{"SWARM_LEASE_HOLDER_ID=" + holder}, childEnv(c, dir, childLog)...))
		},
		partition: ls.partition,
		close: func() error {
			ls.close()
			stopAll(members)
			return nil
		},
	}, nil
}

// childEnv is the child's environment: its log, and its heartbeats when stops are measured.
func childEnv(c config, dir, childLog string) []string {
	env := []string{"TESTCHILD_LOG=" + childLog}
	if c.stops+c.partitions > 0 {
		env = append(env, "TESTCHILD_HEARTBEAT_DIR="+beatsDir(dir))
	}
	return env
}

// beatsDir is where the children of the run in dir write their heartbeats.
func beatsDir(dir string) string { return filepath.Join(dir, "beats") }

// handoverRun is what one run of one kind measured.
type handoverRun struct {
	kind  string
	round int
	load  string // the host's 1-minute load average when the run began and ended
	// fromStop, fromSignal, failover, stops and partitions are the latencies in the order
	// measured.
	fromStop, fromSignal, failover, stops, partitions []time.Duration
	// ranOn and cutRanOn are how many stopped and partitioned leaders' children still ran when
	// the next child started.
	ranOn, cutRanOn int
	overlap         overlapCheck
}

// contenders is one run's supervisors.
type contenders struct {
	e       *election
	ttl     time.Duration
	dir     string // the run's temporary directory
	log     string
	procs   map[string]*proc // running, by holder
	stopped []*proc          // signalled, not yet seen to exit
	termed  map[*proc]bool   // the stopped ones that got SIGTERM (must exit 0)
	killed  map[string]int64 // children killed without a word (Term.Child) → their last heartbeat
	started int              // contenders started so far (names the next holder)
}

// runHandovers runs the handover benchmark of every selected supervisor kind for every round,
// alternating the kinds, and returns what it measured, also when it stops early.
func runHandovers(ctx context.Context, c config) ([]handoverRun, error) {
	var out []handoverRun
	for round := range c.rounds {
		var kinds []supervisor
		for k := range supervisors {
			if s := supervisors[(k+round)%len(supervisors)]; c.selected(s.name) {
				kinds = append(kinds, s)
			}
		}
		groups := [][]supervisor{kinds}
		if !c.interleave {
			groups = groups[:0]
			for _, s := range kinds {
				groups = append(groups, []supervisor{s})
			}
		}
		for _, group := range groups {
			runs, err := measureHandovers(ctx, c, group)
			for i := range runs {
				runs[i].round = round + 1
				fmt.Fprint(os.Stderr, runs[i].report())
			}
			out = append(out, runs...)
			if err != nil {
				return out, fmt.Errorf("round %d: %w", round+1, err)
			}
		}
	}
	return out, nil
}

// measuring is one kind's election and contenders during a run.
type measuring struct {
	s   supervisor
	cs  *contenders
	run handoverRun
}

// measureHandovers runs the handovers and failovers of one run of each kind of group at once:
// with several kinds, their elections run side by side and the iterations alternate between
// them (the first kind of an iteration rotating), so that a slow minute of the machine — the
// virtual disk's flushes vary from one minute to the next — falls on every kind alike.
func measureHandovers(ctx context.Context, c config, group []supervisor) (runs []handoverRun, err error) {
	var ms []*measuring
	defer func() {
		for _, m := range ms {
			if cerr := m.cs.close(); err == nil {
				err = cerr
			}
		}
	}()
	load := loadAverage()
	for _, s := range group {
		m := &measuring{s: s, run: handoverRun{kind: s.name}}
		if m.cs, err = openContenders(ctx, c, s); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		ms = append(ms, m)
	}
	for _, m := range ms {
		if err := m.cs.settle(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", m.s.name, err)
		}
		if _, err := m.cs.nextStart(ctx, 0, 10*time.Second, "the first child"); err != nil {
			return nil, fmt.Errorf("%s: %w", m.s.name, err)
		}
	}
	for i := range max(c.handovers, c.failovers, c.stops, c.partitions) {
		for k := range ms {
			m := ms[(k+i)%len(ms)]
			if i < c.handovers {
				stop, signal, err := m.cs.handover(ctx)
				if err != nil {
					return nil, fmt.Errorf("%s: handover %d: %w", m.s.name, i+1, err)
				}
				m.run.fromStop, m.run.fromSignal = append(m.run.fromStop, stop), append(m.run.fromSignal, signal)
			}
			if i < c.failovers {
				took, err := m.cs.failover(ctx)
				if err != nil {
					return nil, fmt.Errorf("%s: failover %d: %w", m.s.name, i+1, err)
				}
				m.run.failover = append(m.run.failover, took)
			}
			if i < c.stops {
				took, ranOn, err := m.cs.freeze(ctx)
				if err != nil {
					return nil, fmt.Errorf("%s: stop %d: %w", m.s.name, i+1, err)
				}
				m.run.stops = append(m.run.stops, took)
				if ranOn {
					m.run.ranOn++
				}
			}
			if i < c.partitions && m.cs.e.partition != nil {
				took, ranOn, err := m.cs.partitionLeader(ctx)
				if err != nil {
					return nil, fmt.Errorf("%s: partition %d: %w", m.s.name, i+1, err)
				}
				m.run.partitions = append(m.run.partitions, took)
				if ranOn {
					m.run.cutRanOn++
				}
			}
		}
	}
	for _, m := range ms {
		events, err := check.ReadChildEvents(m.cs.log)
		if err != nil {
			return nil, err
		}
		m.run.overlap = checkOverlap(events, m.cs.killed, time.Now())
		m.run.load = load + "–" + loadAverage()
		runs = append(runs, m.run)
	}
	return runs, nil
}

// openContenders makes a temporary directory for one run of kind s and opens its election.
func openContenders(ctx context.Context, c config, s supervisor) (*contenders, error) {
	dir, err := os.MkdirTemp("", "bench-peers-"+s.name+"-")
	if err != nil {
		return nil, err
	}
	cs := &contenders{ttl: c.leaseTTL(), dir: dir, log: filepath.Join(dir, "events.log"), procs: map[string]*proc{}, termed: map[*proc]bool{}, killed: map[string]int64{}}
	if c.stops+c.partitions > 0 {
		if err := os.Mkdir(beatsDir(dir), 0o755); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if cs.e, err = s.open(ctx, c, dir, cs.log); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return cs, nil
}

// close stops every contender, then what the election's open started, and removes the run's
// directory.
func (cs *contenders) close() error {
	err := errors.Join(cs.stopAll(), cs.e.close())
	return errors.Join(err, os.RemoveAll(cs.dir))
}

// handover SIGTERMs the leader's supervisor and returns the old child's stop → the next start
// and SIGTERM sent → the next start.
func (cs *contenders) handover(ctx context.Context) (fromStop, fromSignal time.Duration, err error) {
	leader, starts, err := cs.prepare(ctx)
	if err != nil {
		return 0, 0, err
	}
	p := cs.take(leader)
	cs.termed[p] = true
	sent := time.Now()
	if err := syscall.Kill(p.pid, syscall.SIGTERM); err != nil {
		return 0, 0, err
	}
	next, err := cs.nextStart(ctx, starts, 4*cs.ttl+10*time.Second, "a new child after SIGTERM")
	if err != nil {
		return 0, 0, err
	}
	events, terms, err := cs.read()
	if err != nil {
		return 0, 0, err
	}
	i := slices.IndexFunc(terms, func(t check.Term) bool { return t.PID == leader.PID && t.Stop != 0 })
	if i < 0 || next.PID == leader.PID {
		return 0, 0, fmt.Errorf("SIGTERM of %s's supervisor: no stop of child %d before the next child %d:\n%s",
			leader.Holder, leader.PID, next.PID, check.DescribeEvents(events))
	}
	return time.Duration(next.Start - terms[i].Stop), time.Unix(0, next.Start).Sub(sent), nil
}

// failover SIGKILLs the leader's supervisor (only it: its child is left to the kernel's
// parent-death signal) and returns SIGKILL sent → the next child's start.
func (cs *contenders) failover(ctx context.Context) (time.Duration, error) {
	leader, starts, err := cs.prepare(ctx)
	if err != nil {
		return 0, err
	}
	p := cs.take(leader)
	sent := time.Now()
	if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil {
		return 0, err
	}
	next, err := cs.nextStart(ctx, starts, 4*cs.ttl+10*time.Second, "a new child after SIGKILL")
	if err != nil {
		return 0, err
	}
	if next.PID == leader.PID {
		return 0, fmt.Errorf("after SIGKILL of %s's supervisor its child %d started again", leader.Holder, leader.PID)
	}
	return time.Unix(0, next.Start).Sub(sent), nil
}

// freeze SIGSTOPs the leader's supervisor (only it: its child runs on) and returns SIGSTOP sent
// → the next child's start, and whether the stopped leader's child still ran then (its last
// heartbeat came later). It then resumes and terminates the stopped supervisor.
func (cs *contenders) freeze(ctx context.Context) (took time.Duration, ranOn bool, err error) {
	leader, starts, err := cs.prepare(ctx)
	if err != nil {
		return 0, false, err
	}
	p := cs.take(leader)
	sent := time.Now()
	if err := syscall.Kill(p.pid, syscall.SIGSTOP); err != nil {
		return 0, false, err
	}
	next, err := cs.nextStart(ctx, starts, 4*cs.ttl+10*time.Second, "a new child after SIGSTOP")
	// Stopped a little longer: ten of the children's heartbeats tell whether the stopped
	// leader's child still runs.
	_ = timing.Sleep(ctx, 100*time.Millisecond)
	_ = syscall.Kill(p.pid, syscall.SIGCONT)
	_ = syscall.Kill(p.pid, syscall.SIGTERM)
	if err != nil {
		return 0, false, err
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		return 0, false, fmt.Errorf("%s did not exit within 10 s of SIGCONT and SIGTERM:\n%s", filepath.Base(p.cmd.Path), p.out.String())
	}
	beat, err := lastBeat(beatsDir(cs.dir), leader)
	if err != nil {
		return 0, false, err
	}
	if _, terms, err := cs.read(); err == nil && !slices.ContainsFunc(terms, func(t check.Term) bool { return t.Child() == leader.Child() && t.Stop != 0 }) {
		cs.killed[leader.Child()] = beat // killed (etcd-run's lost session): it logged no end
	}
	return time.Duration(next.Start - sent.UnixNano()), beat > next.Start, nil
}

// lastBeat is the time of the last heartbeat of child (TESTCHILD_HEARTBEAT_DIR dir): the last
// time it ran, in Unix nanoseconds.
func lastBeat(dir string, child check.Term) (int64, error) {
	b, err := os.ReadFile(filepath.Join(dir, strconv.FormatUint(child.Fence, 10)+"-"+strconv.Itoa(child.PID)))
	if err != nil {
		return 0, fmt.Errorf("the heartbeat of child %d: %w", child.PID, err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("the heartbeat of child %d: %w", child.PID, err)
	}
	return ns, nil
}

// endKilled ends the terms of the children killed without a word at their last heartbeat.
func endKilled(terms []check.Term, killed map[string]int64) {
	for i := range terms {
		if beat, ok := killed[terms[i].Child()]; ok && terms[i].Stop == 0 {
			terms[i].Stop = beat
		}
	}
}

// prepare settles the contenders, finds the one live child and waits a random part of a renew
// interval, so that stops fall uniformly between two renewals. It returns the leader's child
// and the number of start events so far.
func (cs *contenders) prepare(ctx context.Context) (leader check.Term, starts int, err error) {
	if err := cs.settle(ctx); err != nil {
		return leader, 0, err
	}
	events, terms, err := cs.read()
	if err != nil {
		return leader, 0, err
	}
	live := slices.DeleteFunc(slices.Clone(terms), func(t check.Term) bool { return t.Stop != 0 })
	if len(live) != 1 {
		return leader, 0, fmt.Errorf("%d live children, want 1:\n%s", len(live), check.DescribeEvents(events))
	}
	// The stop's phase against the leader's renewals, not synchronisation.
	if err := timing.Sleep(ctx, rand.N(cs.ttl/3)); err != nil {
		return leader, 0, err
	}
	return live[0], len(terms), nil
}

// read reads the run's child log and the children's terms. A fence that is not a number is the
// overlap check's to report, at the end of the run.
func (cs *contenders) read() ([]check.ChildEvent, []check.Term, error) {
	events, err := check.ReadChildEvents(cs.log)
	if err != nil {
		return nil, nil, err
	}
	terms, _ := check.Terms(events)
	endKilled(terms, cs.killed)
	return events, terms, nil
}

// take returns the supervisor of leader's child and forgets it as a contender.
func (cs *contenders) take(leader check.Term) *proc {
	p := cs.procs[leader.Holder]
	delete(cs.procs, leader.Holder)
	cs.stopped = append(cs.stopped, p)
	return p
}

// settle waits for every stopped supervisor to exit (a terminated one with status 0), starts
// contenders until handoverContenders run, and gives a new one handoverWarmup.
func (cs *contenders) settle(ctx context.Context) error {
	for _, p := range cs.stopped {
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			return fmt.Errorf("%s did not exit within 10 s of its signal:\n%s", filepath.Base(p.cmd.Path), p.out.String())
		}
		if code := p.cmd.ProcessState.ExitCode(); cs.termed[p] && code != 0 {
			return fmt.Errorf("%s exited %d after SIGTERM, want 0:\n%s", filepath.Base(p.cmd.Path), code, p.out.String())
		}
		delete(cs.termed, p)
	}
	cs.stopped = cs.stopped[:0]
	if len(cs.procs) == handoverContenders {
		return nil
	}
	for len(cs.procs) < handoverContenders {
		cs.started++
		holder := "h" + strconv.Itoa(cs.started)
		p, err := cs.e.contender(holder)
		if err != nil {
			return err
		}
		cs.procs[holder] = p
	}
	return timing.Sleep(ctx, handoverWarmup) // the new contender starts and joins the election
}

// nextStart waits for start event number starts+1 and returns it.
func (cs *contenders) nextStart(ctx context.Context, starts int, timeout time.Duration, what string) (check.Term, error) {
	deadline := time.Now().Add(timeout)
	for {
		events, terms, err := cs.read()
		if err != nil {
			return check.Term{}, err
		}
		if len(terms) > starts {
			return terms[starts], nil
		}
		if time.Now().After(deadline) {
			return check.Term{}, fmt.Errorf("no %s within %v:\n%s", what, timeout, check.DescribeEvents(events))
		}
		if err := timing.Sleep(ctx, 5*time.Millisecond); err != nil { // poll interval of the log
			return check.Term{}, err
		}
	}
}

// stopAll stops every contender still running and waits for the stopped ones.
func (cs *contenders) stopAll() error {
	var errs []error
	for _, p := range cs.procs {
		errs = append(errs, p.stop())
	}
	for _, p := range cs.stopped {
		errs = append(errs, p.stop())
	}
	return errors.Join(errs...)
}

// overlapCheck is what a run's whole log says about one child at a time.
type overlapCheck struct {
	children int
	// worst is the longest time two children lived at once; a child still running counts as
	// living until the check.
	worst time.Duration
	// err is every overlap and every fence that did not grow.
	err error
}

// checkOverlap checks that no two children of the log lived at once and that every child's
// fence is greater than those before it.
func checkOverlap(events []check.ChildEvent, killed map[string]int64, now time.Time) overlapCheck {
	terms, err := check.Terms(events)
	endKilled(terms, killed)
	for i := range terms {
		if terms[i].Stop == 0 {
			terms[i].Stop = now.UnixNano()
		}
	}
	return overlapCheck{children: len(terms), worst: check.Overlap(terms), err: errors.Join(err, check.Children(terms, nil, 0))}
}

// report is the run's line on stderr: its percentiles and every latency in order.
func (r handoverRun) report() string {
	sortedMs := func(d []time.Duration) (p50, p99 float64) {
		s := slices.Sorted(slices.Values(d))
		return ms(nearestRank(s, 50)), ms(nearestRank(s, 99))
	}
	inOrder := func(d []time.Duration) string {
		out := make([]string, len(d))
		for i, v := range d {
			out[i] = strconv.FormatInt(v.Milliseconds(), 10)
		}
		return strings.Join(out, " ")
	}
	s50, s99 := sortedMs(r.fromStop)
	g50, g99 := sortedMs(r.fromSignal)
	f50, f99 := sortedMs(r.failover)
	z50, z99 := sortedMs(r.stops)
	x50, x99 := sortedMs(r.partitions)
	return fmt.Sprintf("round %d %-8s handover stop→start p50 %.1f p99 %.1f ms, SIGTERM→start p50 %.1f p99 %.1f ms; failover p50 %.0f p99 %.0f ms; "+
		"SIGSTOP→start p50 %.0f p99 %.0f ms, the stopped leader's child ran on %d of %d times; "+
		"partition→start p50 %.0f p99 %.0f ms, the partitioned leader's child ran on %d of %d times; overlap %.1f ms over %d children; load %s\n"+
		"  stop→start ms: %s\n  SIGTERM→start ms: %s\n  failover ms: %s\n  SIGSTOP→start ms: %s\n  partition→start ms: %s\n",
		r.round, r.kind, s50, s99, g50, g99, f50, f99, z50, z99, r.ranOn, len(r.stops), x50, x99, r.cutRanOn, len(r.partitions),
		ms(r.overlap.worst), r.overlap.children, r.load,
		inOrder(r.fromStop), inOrder(r.fromSignal), inOrder(r.failover), inOrder(r.stops), inOrder(r.partitions))
}
