package faults_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/faults/cluster"
	"github.com/regbo/lfp-swarm-lease/faults/contend"
)

// The lease's TTL and its renew interval (the default, a third of it): short enough that a
// takeover takes seconds, long enough that a renewal fits beside a write blocked by a Raft
// election. -ttl sets another TTL, to measure a scenario at it.
var (
	faultTTL   = 6 * time.Second
	faultRenew = faultTTL / 3
)

// The other lease settings of the campaign.
const (
	faultGrace = 500 * time.Millisecond
	faultPoll  = 200 * time.Millisecond
	faultSkew  = 500 * time.Millisecond
	// callersPerManager one-shot callers talk to each manager.
	callersPerManager = 2
	// thawPrompt is how soon after its thaw a frozen holder's child must be stopped: its
	// supervisor's deadline has passed, so it sends SIGTERM at once.
	thawPrompt = faultGrace + 2*time.Second
)

var long = flag.Bool("long", false, "run the long fault campaign (≥ 10,000 lease operations, randomized fault timing; FAULTS_SEED replays one)")

func TestMain(m *testing.M) {
	flag.DurationVar(&faultTTL, "ttl", faultTTL, "the supervisors' lease TTL (the scenarios' waits follow it)")
	flag.Parse()
	faultRenew = faultTTL / 3
	code := m.Run()
	contend.Cleanup()
	os.Exit(code)
}

// rig is one scenario's cluster with its contenders: one supervisor per manager — a process on
// the host, or the task of a service on that manager (svc) — and callersPerManager one-shot
// callers per manager.
type rig struct {
	t       *testing.T
	c       *cluster.Cluster
	log     string
	bins    contend.Binaries
	retired []*contend.Supervisor // stopped supervisors that restart replaced
	sups    []*contend.Supervisor // sups[i] talks to manager i+1; nil with svc
	svc     *service              // the containerised supervisors, if they are
	kills   map[string]int64      // children killed with their container (Term.Child) → when seen gone
	callers []*contend.Caller
	stop    context.CancelFunc
	wg      sync.WaitGroup
	floor   uint64
	thaws   []check.Thaw
	began   int64
	figures []string
	rng     *rand.Rand // the long variant's fault timing
	calls   int        // lease calls made, set by finish
	done    bool
}

// newRig is a rig whose supervisors are processes on the host.
func newRig(t *testing.T, seed uint64) *rig {
	t.Helper()
	return newRigWith(t, seed, func(r *rig) {
		r.sups = make([]*contend.Supervisor, cluster.Nodes)
		for n := 1; n <= cluster.Nodes; n++ {
			r.startSupervisor(n)
		}
	})
}

// newContainerRig is a rig whose supervisors are the tasks of a global Swarm service, `run`
// each container's init.
func newContainerRig(t *testing.T, seed uint64) *rig {
	t.Helper()
	return newRigWith(t, seed, func(r *rig) { r.svc = deployService(t, r.c, r.bins, r.log) })
}

// newRigWith starts a cluster, the supervisors (start) and the callers, and waits for the first
// child.
func newRigWith(t *testing.T, seed uint64, start func(*rig)) *rig {
	t.Helper()
	c := cluster.ForTest(t)
	bins, err := contend.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, c: c, bins: bins, rng: rand.New(rand.NewPCG(seed, 0)), log: filepath.Join(t.TempDir(), "children.log"), began: check.Monotonic(),
		kills: map[string]int64{}}
	t.Cleanup(r.abort)
	start(r)
	for i := range cluster.Nodes * callersPerManager {
		caller, err := contend.NewCaller(c.Host(i%cluster.Nodes+1), "faults-ops", i, seed)
		if err != nil {
			t.Fatal(err)
		}
		r.callers = append(r.callers, caller)
	}
	snap, err := r.callers[0].Election().Init(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r.floor = snap.Fence
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	for _, caller := range r.callers {
		r.wg.Go(func() { caller.Run(ctx, 0) })
	}
	if _, ok := r.waitChild(r.began, time.Minute); !ok {
		t.Fatal("no child started within a minute on a healthy cluster")
	}
	return r
}

// startSupervisor starts the supervisor on manager n.
func (r *rig) startSupervisor(n int) {
	r.t.Helper()
	s, err := contend.StartSupervisor(r.bins, contend.SupervisorConfig{
		Holder: fmt.Sprintf("sup%d", n), Host: r.c.Host(n), Namespace: "faults-run",
		TTL: faultTTL, Grace: faultGrace, Poll: faultPoll, Skew: faultSkew, Log: r.log,
	})
	if err != nil {
		r.t.Fatal(err)
	}
	r.sups[n-1] = s
}

// restart stops the supervisor on manager n (if it runs) and starts a new one with the same
// identity.
func (r *rig) restart(n int) {
	r.t.Helper()
	r.sups[n-1].Stop(30 * time.Second)
	r.retired = append(r.retired, r.sups[n-1])
	r.startSupervisor(n)
}

// terms reads the children's log.
func (r *rig) terms() []check.Term {
	events, err := check.ReadChildEvents(r.log)
	if err != nil {
		r.t.Fatal(err)
	}
	terms, err := check.Terms(events)
	if err != nil {
		r.t.Fatal(err)
	}
	for i := range terms {
		if gone, ok := r.kills[terms[i].Child()]; ok && terms[i].Stop == 0 {
			terms[i].Stop, terms[i].Killed = gone, true
		}
	}
	return terms
}

// waitChild polls the children's log until a child that started after mono runs.
func (r *rig) waitChild(after int64, timeout time.Duration) (check.Term, bool) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if term, ok := check.FirstStartAfter(r.terms(), after); ok {
			return term, true
		}
		time.Sleep(20 * time.Millisecond) // poll the log
	}
	return check.Term{}, false
}

// waitChildOn polls the children's log for the first child started after the monotonic time
// after by the supervisor on manager n.
func (r *rig) waitChildOn(n int, after int64, timeout time.Duration) (check.Term, bool) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, term := range r.terms() {
			if term.Start > after && r.managerOf(term.Holder) == n {
				return term, true
			}
		}
		time.Sleep(20 * time.Millisecond) // poll the log
	}
	return check.Term{}, false
}

// holder returns the running child's term and the manager its supervisor talks to.
func (r *rig) holder() (check.Term, int) {
	r.t.Helper()
	term, ok := check.Running(r.terms(), check.Monotonic())
	if !ok {
		r.t.Fatal("no child runs")
	}
	return term, r.managerOf(term.Holder)
}

// managerOf is the manager of holder: a host supervisor's name, or the node ID of a task's.
func (r *rig) managerOf(holder string) int {
	for i, s := range r.sups {
		if s.Config.Holder == holder {
			return i + 1
		}
	}
	for n := 1; n <= cluster.Nodes && r.svc != nil; n++ {
		if r.c.NodeID(n) == holder {
			return n
		}
	}
	r.t.Fatalf("unknown holder %q", holder)
	return 0
}

// leader returns the Raft leader as seen through any manager that answers.
func (r *rig) leader() int {
	r.t.Helper()
	for n := 1; n <= cluster.Nodes; n++ {
		ctx, cancel := context.WithTimeout(r.t.Context(), 10*time.Second)
		l, err := r.c.Leader(ctx, n)
		cancel()
		if err == nil {
			return l
		}
	}
	r.t.Fatal("no manager names a Raft leader")
	return 0
}

// jitter waits a random part of a TTL in the long variant, so that faults hit the lease at
// every point of its renewal cycle; the CI variant injects them at once.
func (r *rig) jitter() {
	if *long {
		time.Sleep(time.Duration(r.rng.Int64N(int64(faultTTL)))) // randomized fault timing, seeded
	}
}

// figure records a measured figure for the summary line.
func (r *rig) figure(format string, args ...any) {
	r.figures = append(r.figures, fmt.Sprintf(format, args...))
	r.t.Logf("figure: "+format, args...)
}

// since is the time from mono to now.
func since(mono int64) time.Duration {
	return time.Duration(check.Monotonic() - mono).Round(time.Millisecond)
}

// recovered waits until every manager sees all three managers reachable and a child runs, and
// returns the time since mono.
func (r *rig) recovered(mono int64) time.Duration {
	r.t.Helper()
	for n := 1; n <= cluster.Nodes; n++ {
		if err := r.c.WaitManagers(r.t.Context(), n, 2*time.Minute); err != nil {
			r.t.Fatal(err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, ok := check.Running(r.terms(), check.Monotonic()); ok {
			return since(mono)
		}
		if time.Now().After(deadline) {
			r.t.Fatal("no child runs a minute after the cluster healed")
		}
		time.Sleep(20 * time.Millisecond) // poll the log
	}
}

// finish stops every contender and runs the checkers; it logs the scenario's summary line.
func (r *rig) finish() {
	t := r.t
	t.Helper()
	r.done = true
	r.stop()
	r.wg.Wait()
	var slowest time.Duration
	for _, s := range r.sups {
		began := time.Now()
		if !s.Stop(time.Minute) {
			t.Errorf("supervisor %s did not exit within a minute of SIGTERM", s.Config.Holder)
		}
		slowest = max(slowest, time.Since(began).Round(time.Millisecond))
	}
	if r.svc != nil {
		slowest = r.svc.remove(t)
	}
	r.figure("slowest supervisor exit after SIGTERM %v", slowest)
	terms := r.terms()
	if err := check.Children(terms, r.thaws, thawPrompt); err != nil {
		t.Errorf("children: %v", err)
	}
	var ops []check.LeaseOp
	var counts contend.Counts
	errs := map[string]int{}
	for _, c := range r.callers {
		ops = append(ops, c.Ops()...)
		counts = counts.Add(c.Counts())
		for class, n := range c.Errors() {
			errs[class] += n
		}
		_ = c.Close()
	}
	for class, n := range errs {
		t.Logf("store errors: %d × %s", n, class)
	}
	r.calls = counts.Calls
	res, stale, err := check.LeaseHistory(r.floor, ops, 2*time.Minute)
	if err != nil {
		t.Errorf("lease history: %v", err)
		r.keepHistory(ops)
	}
	r.figure("refusals: %v", stale)
	fences := make([]uint64, len(terms))
	for i, term := range terms {
		fences[i] = term.Fence - terms[0].Fence
	}
	t.Logf("summary %s: %d terms (fences +%v), %d lease calls, %d store errors (%.1f%%), %d unknown outcomes, porcupine %s; %s",
		t.Name(), len(terms), fences, counts.Calls, counts.Errors, 100*float64(counts.Errors)/float64(max(counts.Calls, 1)),
		counts.Unknown, res, strings.Join(r.figures, "; "))
	r.dumpIfFailed()
}

// dumpIfFailed logs every supervisor's output, the replaced ones' too, if the test failed.
func (r *rig) dumpIfFailed() {
	if !r.t.Failed() {
		return
	}
	for _, s := range append(r.retired, r.sups...) {
		if s != nil {
			r.t.Logf("supervisor %s (pid %d) output:\n%s", s.Config.Holder, s.PID(), s.Output())
		}
	}
	if r.svc != nil {
		r.svc.dump(r.t)
	}
}

// keepHistory writes a failed run's lease history (JSON lines) to a directory that outlives the
// test, and names it.
func (r *rig) keepHistory(ops []check.LeaseOp) {
	dir, err := os.MkdirTemp("", "lfp-faults-history-")
	if err != nil {
		r.t.Log(err)
		return
	}
	path := filepath.Join(dir, "lease-history.jsonl")
	var b strings.Builder
	for _, op := range ops {
		line, _ := json.Marshal(op)
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		r.t.Log(err)
		return
	}
	r.t.Logf("the lease history (floor %d): %s", r.floor, path)
}

// abort stops whatever a failed scenario left running.
func (r *rig) abort() {
	if r.done {
		return
	}
	r.done = true
	if r.stop != nil {
		r.stop()
	}
	r.wg.Wait()
	for _, s := range r.sups {
		if s != nil {
			s.Stop(10 * time.Second)
		}
	}
	r.dumpIfFailed()
	if r.svc != nil {
		r.svc.remove(r.t)
	}
}
