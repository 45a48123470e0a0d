package e2e

// Benchmarks of the `run` supervisor, recorded in BENCHMARKS.md ("`run` supervisor"):
//
//   - BenchmarkRunFailover{File,Swarm}: SIGKILL of the leader's supervisor (or `docker kill` of
//     its container) → the next child's start event. One failover per iteration.
//   - BenchmarkRunHandover{File,Swarm}: SIGTERM of the leader's supervisor (or `docker kill -s
//     TERM` of its container) → the next child's start event, and the old child's stop event →
//     the next child's start event. One handover per iteration.
//   - BenchmarkRunAPIRates: Docker API requests per second of an idle follower and of the
//     holder, counted by a reverse proxy in front of each `run` process, with the default timings.
//
// Failover and handover run the short test timings of the supervisor tests (file store: TTL 2 s,
// grace 300 ms, poll 100 ms, run_test.go's fileRunEnv; Swarm: TTL 3 s, grace 500 ms, poll 200 ms,
// run_swarm_test.go's runSwarm* constants) and report p50/p99 by nearest rank ("p50-ms",
// "p99-ms"), the TTL ("ttl-ms") and the largest overlap of two children's lives over the whole
// child log ("overlap-ms", which must be 0; checkOneChildAtATime then checks the log).
//
// These are benchmarks, not tests: `go test` without -bench runs none of them. The Swarm ones
// skip without a test Swarm (leasetest.SwarmHost; they fail instead when CI=true).
//
// run_test.go's startProc/fileRunEnv/testChild and run_swarm_test.go's deployRunService and
// swarmRunImage take a *testing.T, which a benchmark does not have: their few lines are redone
// here for testing.TB, and everything else (runProc, the child log, checkOneChildAtATime,
// liveChildren, the runSwarm* timings) is shared. Made testing.TB there, they would serve here
// as they are.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/runloop"
	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/faults/contend"
	"github.com/regbo/lfp-swarm-lease/images/imagestest"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
)

// benchContenders is how many `run` processes (or replicas) contend in the failover and handover
// benchmarks.
const benchContenders = 3

// benchFileTTL and the other benchFile* values are the file-store timings of fileRunEnv.
const (
	benchFileTTL   = 2 * time.Second
	benchFileGrace = 300 * time.Millisecond
	benchFilePoll  = 100 * time.Millisecond
	benchFileSkew  = 100 * time.Millisecond
	benchFileRenew = benchFileTTL / 3 // the default renew interval
)

// benchFollowerWarmup is how long a new contender gets to start and read the election before the
// next leader is stopped, so that every iteration has all its contenders polling.
const benchFollowerWarmup = time.Second

// BenchmarkRunFailoverFile measures crash failover on the file store: three `run` processes;
// each iteration SIGKILLs the leader's supervisor and measures SIGKILL → the next child's start
// event (goal ≤ TTL + 0.5 s).
func BenchmarkRunFailoverFile(b *testing.B) {
	benchFailover(b, newFileBenchCluster(b))
}

// BenchmarkRunFailoverSwarm measures crash failover on the real Swarm: a service of three `run`
// replicas; each iteration crashes the leader's container (the child event's hostname) and
// measures the crash → the next child's start event. The crashes:
//
//   - kill=docker: `docker kill` (SIGKILL to the container's init, run): the container ends, and
//     Swarm reports its task failed — evidence that every process of it is gone (goal: p50 ≤
//     1.5 s, p99 ≤ 3 s at the default TTL of 30 s);
//   - kill=oom-child: the child allocates past the container's memory limit (64 MiB): the kernel's
//     OOM killer kills the largest process of the container, the child, and run sees its
//     command die — once the child has run runloop.DefaultHealthyRun, so that its death is one
//     crash, not one of a crash loop that run backs off from;
//   - kill=oom-init: the same, with run made the OOM killer's first choice (its oom_score_adj
//     1000, as if it were the largest): the kernel kills the container's init, and the container
//     ends as with docker kill.
//
// Each at ttl=3s (the test timings, runSwarm*) and ttl=30s (the default TTL and poll interval).
func BenchmarkRunFailoverSwarm(b *testing.B) {
	for _, ttl := range []time.Duration{runSwarmTTL, 30 * time.Second} {
		for _, crash := range []string{"docker", "oom-child", "oom-init"} {
			b.Run(fmt.Sprintf("ttl=%v/kill=%s", ttl, crash), func(b *testing.B) {
				c := newSwarmBenchCluster(b, ttl, crash)
				c.crash = crash
				benchFailover(b, c)
			})
		}
	}
}

// BenchmarkRunHandoverFile measures graceful handover on the file store: each iteration SIGTERMs
// the leader's supervisor, which stops its child, releases and exits (goal p50 ≤ 300 ms,
// p99 ≤ 1 s).
func BenchmarkRunHandoverFile(b *testing.B) {
	benchHandover(b, newFileBenchCluster(b))
}

// BenchmarkRunHandoverSwarm measures graceful handover on the real Swarm: each iteration sends
// SIGTERM to the leader's container (`docker kill -s TERM`), whose supervisor stops its child,
// releases and exits; Swarm then restarts the task (goal p50 ≤ 300 ms, p99 ≤ 1 s).
func BenchmarkRunHandoverSwarm(b *testing.B) {
	benchHandover(b, newSwarmBenchCluster(b, runSwarmTTL, "docker"))
}

// benchCluster is one election with benchContenders `run` contenders whose children share one
// event log.
type benchCluster interface {
	// logPath is the children's shared event log, on the host.
	logPath() string
	// ttl and renew are the election's TTL and the leader's renew interval.
	ttl() time.Duration
	renew() time.Duration
	// kill crashes the supervisor of leader's child. sent is taken just before the kill; dead,
	// when not zero, is a time by which the child was certainly gone without a chance to log its
	// end (a killed container, an OOM kill); the benchmark reports it too (dead-p50-ms).
	kill(tb testing.TB, leader check.ChildEvent) (sent, dead time.Time)
	// terminate sends SIGTERM to the supervisor of leader's child and returns when it was sent.
	terminate(tb testing.TB, leader check.ChildEvent) (sent time.Time)
	// settle returns once every stopped supervisor has exited (a terminated one with status 0),
	// benchContenders contenders run again, and the newest has had benchFollowerWarmup.
	settle(tb testing.TB)
}

// benchFailover runs one crash failover per iteration and reports its percentiles.
func benchFailover(b *testing.B, c benchCluster) {
	killed := map[string]time.Time{}
	var took, died []time.Duration
	same := 0 // next children of the crashed leader's own contender (its container, restarting its command)
	for b.Loop() {
		b.StopTimer()
		leader, starts := benchPrepare(b, c, killed)
		b.StartTimer()
		sent, dead := c.kill(b, leader)
		if !dead.IsZero() {
			killed[leader.Child()] = dead
			died = append(died, dead.Sub(sent))
		}
		next := benchNextStart(b, c, starts, 4*c.ttl()+10*time.Second, "a new child after the kill")
		if next.Child() == leader.Child() || fenceOf(b, next) <= fenceOf(b, leader) {
			b.Fatalf("after killing %s (fence %s) the next child is %s (fence %s)", leader.Child(), leader.Fence, next.Child(), next.Fence)
		}
		took = append(took, next.Time().Sub(sent))
		if next.Hostname == leader.Hostname && next.HolderID == leader.HolderID {
			same++
		}
	}
	benchReportLatencies(b, took, "")
	benchReportLatencies(b, died, "dead-")
	b.ReportMetric(float64(same), "same-contender")
	b.ReportMetric(float64(c.ttl().Milliseconds()), "ttl-ms")
	benchReportOverlap(b, readChildEvents(b, c.logPath()), killed)
}

// benchHandover runs one graceful handover per iteration and reports, as p50-ms/p99-ms, the
// old child's stop event → the new child's start event and, as sigterm-p50-ms/sigterm-p99-ms,
// SIGTERM sent → the new child's start event.
func benchHandover(b *testing.B, c benchCluster) {
	var fromStop, fromSignal []time.Duration
	for b.Loop() {
		b.StopTimer()
		leader, starts := benchPrepare(b, c, nil)
		b.StartTimer()
		sent := c.terminate(b, leader)
		next := benchNextStart(b, c, starts, 4*c.ttl()+10*time.Second, "a new child after SIGTERM")
		events := readChildEvents(b, c.logPath())
		var stop check.ChildEvent
		for _, e := range events {
			if e.Event == "stop" && e.Child() == leader.Child() {
				stop = e
			}
		}
		if stop.Event == "" || next.Child() == leader.Child() || fenceOf(b, next) <= fenceOf(b, leader) {
			b.Fatalf("SIGTERM of %s (fence %s): stop event %+v, next child %s (fence %s):\n%s",
				leader.Child(), leader.Fence, stop, next.Child(), next.Fence, check.DescribeEvents(events))
		}
		fromStop = append(fromStop, next.Time().Sub(stop.Time()))
		fromSignal = append(fromSignal, next.Time().Sub(sent))
	}
	benchReportLatencies(b, fromStop, "")
	benchReportLatencies(b, fromSignal, "sigterm-")
	b.ReportMetric(float64(c.ttl().Milliseconds()), "ttl-ms")
	benchReportOverlap(b, readChildEvents(b, c.logPath()), nil)
}

// benchPrepare settles the cluster, finds the one live child, and waits a random part of a
// renew interval, so that stops fall uniformly between two renewals. It returns the leader's
// child and the number of start events so far.
func benchPrepare(b *testing.B, c benchCluster, killed map[string]time.Time) (leader check.ChildEvent, starts int) {
	c.settle(b)
	events := readChildEvents(b, c.logPath())
	live := liveChildren(events, killed)
	if len(live) != 1 {
		b.Fatalf("%d live children, want 1:\n%s", len(live), check.DescribeEvents(events))
	}
	time.Sleep(rand.N(c.renew())) // the stop's phase against the leader's renewals, not synchronisation
	return live[0], countEvents(events, "start")
}

// benchNextStart waits for start event number starts+1 and returns it.
func benchNextStart(b *testing.B, c benchCluster, starts int, timeout time.Duration, what string) check.ChildEvent {
	events := waitForEvents(b, c.logPath(), timeout, what, func(ev []check.ChildEvent) bool { return countEvents(ev, "start") > starts })
	return startsOf(events)[starts]
}

// benchReportLatencies reports the nearest-rank p50 and p99 of took, in milliseconds.
func benchReportLatencies(b *testing.B, took []time.Duration, prefix string) {
	if len(took) == 0 {
		return
	}
	sorted := slices.Clone(took)
	slices.Sort(sorted)
	b.ReportMetric(nearestRankMillis(sorted, 50), prefix+"p50-ms")
	b.ReportMetric(nearestRankMillis(sorted, 99), prefix+"p99-ms")
	ms := make([]string, len(took))
	for i, d := range took {
		ms[i] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	b.Logf("%slatencies (ms, in order): %s", prefix, strings.Join(ms, " "))
}

// nearestRankMillis returns the p-th percentile of sorted by the nearest-rank method, in
// milliseconds: the value of rank ⌈p/100 × n⌉ (for 20 runs, p99 is the slowest).
func nearestRankMillis(sorted []time.Duration, p int) float64 {
	rank := min(max((p*len(sorted)+99)/100, 1), len(sorted))
	return float64(sorted[rank-1]) / float64(time.Millisecond)
}

// benchReportOverlap reports, as overlap-ms, the largest time two children of the log lived at
// once (0 when none did); a child without an end event ends at its time in killed, or is still
// running. checkOneChildAtATime then checks the whole log.
func benchReportOverlap(b *testing.B, events []check.ChildEvent, killed map[string]time.Time) {
	terms, err := check.Terms(events)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UnixNano()
	for i := range terms {
		if terms[i].Stop == 0 {
			terms[i].Stop = now
			if k, ok := killed[terms[i].Child()]; ok {
				terms[i].Stop = k.UnixNano()
			}
		}
	}
	b.ReportMetric(float64(check.Overlap(terms))/float64(time.Millisecond), "overlap-ms")
	b.Logf("%d children over the whole log", len(terms))
	checkOneChildAtATime(b, events, killed)
}

var (
	benchChildOnce sync.Once
	benchChildPath string
)

// benchTestChild returns a testchild binary built once for the benchmarks, in a directory of
// its own (run_test.go's testChild needs a *testing.T).
func benchTestChild(tb testing.TB) string {
	tb.Helper()
	benchChildOnce.Do(func() {
		dir := filepath.Join(filepath.Dir(binary), "bench")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		benchChildPath = buildTestChild(tb, dir)
	})
	if benchChildPath == "" {
		tb.Fatal("testchild was not built")
	}
	return benchChildPath
}

// benchStartRun starts `run -- testchild` as holder with env (as startRun does); the process is
// SIGKILLed when the benchmark ends if it still runs.
func benchStartRun(tb testing.TB, env []string, holder string) *runProc {
	tb.Helper()
	return startProc(tb, "run "+holder, append([]string{"SWARM_LEASE_HOLDER_ID=" + holder}, env...), "run", "--", benchTestChild(tb))
}

// fileBenchCluster is benchContenders `run` processes on one file-store election.
type fileBenchCluster struct {
	env     []string
	log     string
	procs   map[string]*runProc // the running contenders, by holder ID
	stopped []*runProc          // stopped, not yet seen to exit
	termed  map[*runProc]bool   // the stopped ones that got SIGTERM (must exit 0)
	started int                 // contenders started so far (names the next holder)
}

// newFileBenchCluster starts the contenders with fileRunEnv's timings and waits for the first
// child.
func newFileBenchCluster(b *testing.B) *fileBenchCluster {
	dir := b.TempDir()
	c := &fileBenchCluster{
		env: []string{
			"SWARM_LEASE_STORE=file://" + filepath.Join(dir, "store"),
			"SWARM_LEASE_NAMESPACE=" + leasetest.Namespace(b),
			"SWARM_LEASE_TTL_MS=" + strconv.FormatInt(benchFileTTL.Milliseconds(), 10),
			"SWARM_LEASE_SHUTDOWN_TIMEOUT_MS=" + strconv.FormatInt(benchFileGrace.Milliseconds(), 10),
			"SWARM_LEASE_DEFAULT_POLL_MS=" + strconv.FormatInt(benchFilePoll.Milliseconds(), 10),
			"SWARM_LEASE_MAX_CLOCK_SKEW_MS=" + strconv.FormatInt(benchFileSkew.Milliseconds(), 10),
			"SWARM_LEASE_LISTEN=127.0.0.1:0", // each process serves its API on a port of its own
			"TESTCHILD_LOG=" + filepath.Join(dir, "events.log"),
		},
		log:    filepath.Join(dir, "events.log"),
		procs:  map[string]*runProc{},
		termed: map[*runProc]bool{},
	}
	c.settle(b)
	waitForEvents(b, c.log, 10*time.Second, "the first child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 1 })
	return c
}

// logPath, ttl, renew, kill, terminate and settle implement benchCluster.

func (c *fileBenchCluster) logPath() string      { return c.log }
func (c *fileBenchCluster) ttl() time.Duration   { return benchFileTTL }
func (c *fileBenchCluster) renew() time.Duration { return benchFileRenew }

// leader returns the process of leader's child and forgets it as a contender.
func (c *fileBenchCluster) leader(tb testing.TB, leader check.ChildEvent) *runProc {
	p := c.procs[leader.HolderID]
	if p == nil {
		tb.Fatalf("no running contender %q for the child %s", leader.HolderID, leader.Child())
	}
	delete(c.procs, leader.HolderID)
	c.stopped = append(c.stopped, p)
	return p
}

func (c *fileBenchCluster) kill(tb testing.TB, leader check.ChildEvent) (sent, dead time.Time) {
	p := c.leader(tb, leader)
	sent = time.Now()
	if err := p.cmd.Process.Kill(); err != nil {
		tb.Fatal(err)
	}
	// The guard's parent-death signal stops the child, which logs its stop.
	return sent, time.Time{}
}

func (c *fileBenchCluster) terminate(tb testing.TB, leader check.ChildEvent) time.Time {
	p := c.leader(tb, leader)
	c.termed[p] = true
	sent := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		tb.Fatal(err)
	}
	return sent
}

func (c *fileBenchCluster) settle(tb testing.TB) {
	for _, p := range c.stopped {
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			tb.Fatalf("run %s did not exit within 10 s of its stop; output:\n%s", p.name, p.out.String())
		}
		if code := p.cmd.ProcessState.ExitCode(); c.termed[p] && code != 0 {
			tb.Fatalf("run %s exited %d after SIGTERM, want 0; output:\n%s", p.name, code, p.out.String())
		}
		delete(c.termed, p)
	}
	c.stopped = c.stopped[:0]
	if len(c.procs) == benchContenders {
		return
	}
	for len(c.procs) < benchContenders {
		c.started++
		holder := "h" + strconv.Itoa(c.started)
		c.procs[holder] = benchStartRun(tb, c.env, holder)
	}
	time.Sleep(benchFollowerWarmup) // the new contender starts and reads the election
}

// swarmBenchCluster is a service of runSwarmReplicas `run -- /testchild` replicas with a TTL of
// ttl — at runSwarmTTL, run_swarm_test.go's timings (runSwarmGrace, runSwarmPoll); else the
// grace and the poll interval of the defaults — discovering their election from their task's
// labels like deployRunService's.
type swarmBenchCluster struct {
	host, name, log string
	ttlOf           time.Duration
	crash           string       // how kill crashes the leader (BenchmarkRunFailoverSwarm)
	engine          *http.Client // straight to the engine's socket, for the timed signals
	stopped         []string     // containers signalled, not yet seen to exit
	termed          map[string]bool
}

// newSwarmBenchCluster deploys the service and waits for its first child and all its replicas.
// The image holds only the static lfp-swarm-lease (the image recipe's, imagestest.Image); the
// static testchild is bind-mounted beside it. An OOM crash gives every replica a memory limit.
func newSwarmBenchCluster(b *testing.B, ttl time.Duration, crash string) *swarmBenchCluster {
	host := leasetest.SwarmHost(b)
	dir := b.TempDir()
	static := filepath.Join(dir, "lfp-swarm-lease")
	build := exec.Command("go", "build", "-o", static, "../cmd/lfp-swarm-lease")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("static build: %v\n%s", err, out)
	}
	image := "lfp-swarm-lease-test:run-bench"
	imagestest.Load(b, host, image, imagestest.Image(b, static))
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		b.Fatal(err)
	}
	socket := strings.TrimPrefix(host, "unix://")
	c := &swarmBenchCluster{
		host: host, name: "runbench-" + leasetest.Namespace(b), log: filepath.Join(shared, "events.log"),
		ttlOf: ttl, engine: benchUnixClient(socket), termed: map[string]bool{},
	}
	args := []string{"service", "create", "-d", "--no-resolve-image", "--name", c.name,
		"--replicas", strconv.Itoa(runSwarmReplicas),
		"--stop-grace-period", "5s",
		"--restart-delay", "0s", // replace a stopped replica at once: shorter iterations
		"--mount", "type=bind,source=" + socket + ",target=/var/run/docker.sock",
		"--mount", "type=bind,source=" + shared + ",target=/shared",
		"--mount", "type=bind,source=" + benchTestChild(b) + ",target=/testchild,readonly",
		"--env", "TESTCHILD_LOG=/shared/events.log",
		"--env", "SWARM_LEASE_TTL_MS=" + strconv.FormatInt(ttl.Milliseconds(), 10)}
	if ttl == runSwarmTTL {
		args = append(args, "--env", "SWARM_LEASE_SHUTDOWN_TIMEOUT_MS="+strconv.FormatInt(runSwarmGrace.Milliseconds(), 10),
			"--env", "SWARM_LEASE_DEFAULT_POLL_MS="+strconv.FormatInt(runSwarmPoll.Milliseconds(), 10))
	}
	if strings.HasPrefix(crash, "oom-") {
		args = append(args, "--limit-memory", "64m")
	}
	leasetest.Docker(b, host, append(args, image, "run", "--", "/testchild")...)
	b.Cleanup(c.remove)
	waitForEvents(b, c.log, 60*time.Second, "the first child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 1 })
	c.settle(b)
	return c
}

// logPath, ttl, renew, kill, terminate and settle implement benchCluster.

func (c *swarmBenchCluster) logPath() string      { return c.log }
func (c *swarmBenchCluster) ttl() time.Duration   { return c.ttlOf }
func (c *swarmBenchCluster) renew() time.Duration { return c.ttlOf / 3 }

// signal sends sig to the container of leader's child through the engine's API (what `docker
// kill [-s TERM]` does); for SIGKILL the engine answers once the container is dead.
func (c *swarmBenchCluster) signal(tb testing.TB, leader check.ChildEvent, sig string) (sent, answered time.Time) {
	c.stopped = append(c.stopped, leader.Hostname)
	sent = time.Now()
	resp, err := c.engine.Post("http://docker/containers/"+leader.Hostname+"/kill?signal="+sig, "", nil)
	answered = time.Now()
	if err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		tb.Fatalf("kill -s %s %s: %s", sig, leader.Hostname, resp.Status)
	}
	return sent, answered
}

func (c *swarmBenchCluster) kill(tb testing.TB, leader check.ChildEvent) (sent, dead time.Time) {
	if c.crash == "docker" {
		return c.signal(tb, leader, "KILL")
	}
	// The container's init (run) and the child, as this host sees them.
	init, err := strconv.Atoi(leasetest.Docker(tb, c.host, "inspect", "--format", "{{.State.Pid}}", leader.Hostname))
	if err != nil {
		tb.Fatal(err)
	}
	pid := childIn(tb, init)
	if c.crash == "oom-child" {
		time.Sleep(time.Until(leader.Time().Add(runloop.DefaultHealthyRun))) // one crash, not a crash loop
	}
	if c.crash == "oom-init" {
		if err := os.WriteFile("/proc/"+strconv.Itoa(init)+"/oom_score_adj", []byte("1000"), 0); err != nil {
			tb.Fatal(err)
		}
		c.stopped = append(c.stopped, leader.Hostname) // the container ends; Swarm replaces it
	}
	sent = time.Now()
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		tb.Fatal(err)
	}
	for !processGone(pid) {
		time.Sleep(time.Millisecond) // poll for the OOM kill
	}
	return sent, time.Now()
}

func (c *swarmBenchCluster) terminate(tb testing.TB, leader check.ChildEvent) time.Time {
	c.termed[leader.Hostname] = true
	sent, _ := c.signal(tb, leader, "TERM")
	return sent
}

// childIn returns the host PID of the live /testchild below init (the container's init, run).
func childIn(tb testing.TB, init int) int {
	for _, pid := range contend.Descendants(init) {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if strings.HasPrefix(string(cmdline), "/testchild\x00") && !processGone(pid) {
			return pid
		}
	}
	tb.Fatalf("no /testchild below %d", init)
	return 0
}

// containers returns the short IDs (= hostnames) of the service's running containers.
func (c *swarmBenchCluster) containers(tb testing.TB) []string {
	return strings.Fields(leasetest.Docker(tb, c.host, "ps", "--filter", "label=com.docker.swarm.service.name="+c.name, "--format", "{{.ID}}"))
}

func (c *swarmBenchCluster) settle(tb testing.TB) {
	var running []string
	for deadline := time.Now().Add(60 * time.Second); ; {
		running = c.containers(tb)
		if len(running) == runSwarmReplicas && !slices.ContainsFunc(c.stopped, func(id string) bool { return slices.Contains(running, id) }) {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no %d running replicas of %s after 60 s (running %v, stopped %v)", runSwarmReplicas, c.name, running, c.stopped)
		}
		time.Sleep(100 * time.Millisecond) // poll for Swarm to replace the stopped replica
	}
	for _, id := range c.stopped {
		if !c.termed[id] {
			continue
		}
		if code := leasetest.Docker(tb, c.host, "inspect", "--format", "{{.State.ExitCode}}", id); code != "0" {
			tb.Fatalf("container %s exited %s after SIGTERM, want 0", id, code)
		}
		delete(c.termed, id)
	}
	if len(c.stopped) > 0 {
		c.stopped = c.stopped[:0]
		time.Sleep(benchFollowerWarmup) // the new replica starts and reads the election
	}
}

// remove removes the service, waits for its containers to be gone and removes the anchor.
func (c *swarmBenchCluster) remove() {
	_ = exec.Command("docker", "-H", c.host, "service", "rm", c.name).Run()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		out, err := exec.Command("docker", "-H", c.host, "ps", "-aq", "--filter", "label=com.docker.swarm.service.name="+c.name).Output()
		if err == nil && strings.TrimSpace(string(out)) == "" {
			break
		}
		time.Sleep(100 * time.Millisecond) // poll for the containers to be removed
	}
	_ = exec.Command("docker", "-H", c.host, "service", "rm", swarmstore.AnchorName(c.name)).Run()
}

// benchUnixClient is an HTTP client whose every connection goes to the Unix socket at path.
func benchUnixClient(path string) *http.Client {
	return &http.Client{Transport: benchUnixTransport(path)}
}

func benchUnixTransport(path string) *http.Transport {
	return &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}
}

// BenchmarkRunAPIRates measures the Docker API requests of an idle follower and of the holder:
// two `run` processes on the host (not in containers) with the default timings (TTL 30 s,
// renew every 10 s, poll every 1 s), each with DOCKER_HOST at its own counting reverse proxy to
// the test Swarm. The holder starts first and takes the lease; the follower then contends.
//
// It runs twice: http=on is `run` as deployed, with its HTTP API (on 127.0.0.1:0, so that two
// processes fit on one host; the API's watcher reads the election too, nobody calls the API);
// http=off sets SWARM_LEASE_LISTEN=off, leaving the campaign alone. Each role=… sub-benchmark
// watches one process; one iteration is one renew interval (10 s) of watching, so -benchtime 9x
// watches 90 s. It reports reads/s (GET, HEAD) and writes/s (every other method) without the
// event stream, writes per renew interval, and event-streams: the long-lived GET /events
// requests the process opened since it started (one per stream that never broke). Goals:
// follower ≤ 1 read/s and 0 writes; holder ≤ 1 write per renew interval.
func BenchmarkRunAPIRates(b *testing.B) {
	host := leasetest.SwarmHost(b)
	for _, listen := range []struct{ name, value string }{{"on", "127.0.0.1:0"}, {"off", "off"}} {
		b.Run("http="+listen.name, func(b *testing.B) { benchAPIRates(b, host, listen.value) })
	}
}

// benchAPIRates is one variant of BenchmarkRunAPIRates: listen is SWARM_LEASE_LISTEN.
func benchAPIRates(b *testing.B, host, listen string) {
	socket := strings.TrimPrefix(host, "unix://")
	ns := leasetest.Namespace(b)
	b.Cleanup(func() { _ = exec.Command("docker", "-H", host, "service", "rm", swarmstore.AnchorName(ns)).Run() })
	childLog := filepath.Join(b.TempDir(), "events.log")
	env := []string{"SWARM_LEASE_STORE=swarm", "SWARM_LEASE_NAMESPACE=" + ns, "SWARM_LEASE_LISTEN=" + listen, "TESTCHILD_LOG=" + childLog}
	const renew = 10 * time.Second // the default: TTL 30 s / 3

	holderProxy := startCountingProxy(b, socket)
	holder := benchStartRun(b, append(env, "DOCKER_HOST=unix://"+holderProxy.path), "holder")
	waitForEvents(b, childLog, 30*time.Second, "the holder's child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 1 })
	// A follower reads once per poll and once after every renewal's event, which restarts its
	// poll timer: what that costs depends on the phase of its polls against the renewals, so
	// the phase is left to chance rather than to the start-up times.
	time.Sleep(rand.N(time.Second))
	followerProxy := startCountingProxy(b, socket)
	follower := benchStartRun(b, append(env, "DOCKER_HOST=unix://"+followerProxy.path), "follower")
	time.Sleep(3 * time.Second) // the follower starts, opens its event streams and polls

	for _, role := range []struct {
		name  string
		proc  *runProc
		proxy *countingProxy
	}{{"follower", follower, followerProxy}, {"holder", holder, holderProxy}} {
		b.Run("role="+role.name, func(b *testing.B) {
			p := role.proxy
			p.reset()
			start := time.Now()
			for b.Loop() {
				time.Sleep(renew) // the measurement window, one renew interval per iteration
			}
			c := p.snapshot()
			secs := time.Since(start).Seconds()
			for _, proc := range []*runProc{holder, follower} {
				select {
				case <-proc.done:
					b.Fatalf("run %s exited while rates were measured:\n%s", proc.name, proc.out.String())
				default:
				}
			}
			b.ReportMetric(float64(c.reads)/secs, "reads/s")
			b.ReportMetric(float64(c.writes)/secs, "writes/s")
			b.ReportMetric(float64(c.writes)/(secs/renew.Seconds()), "writes/renew")
			b.ReportMetric(float64(c.streams), "event-streams")
			b.Logf("%s over %.1f s: %d reads, %d writes; by request: %v", role.name, secs, c.reads, c.writes, c)
		})
	}
	events := readChildEvents(b, childLog)
	if starts := startsOf(events); len(starts) != 1 || starts[0].HolderID != "holder" || countEvents(events, "stop") != 0 {
		b.Fatalf("the lease changed hands while rates were measured:\n%s", check.DescribeEvents(events))
	}
}

// countingProxy is a reverse proxy on a Unix socket to a Docker engine's socket that counts
// the requests through it by method. GET /events (a long-lived stream) is counted apart, and
// since the proxy started; the rest since the last reset.
type countingProxy struct {
	path string // the proxy's socket
	mu   sync.Mutex
	c    proxyCounts
}

// proxyCounts is what a countingProxy counted.
type proxyCounts struct {
	reads, writes, streams int
	byRequest              map[string]int // "METHOD /path" with IDs and the API version elided
}

// startCountingProxy serves a countingProxy to the engine socket target until the benchmark
// ends.
func startCountingProxy(tb testing.TB, target string) *countingProxy {
	tb.Helper()
	dir, err := os.MkdirTemp("", "lfp-proxy") // short: a socket path has at most 107 bytes
	if err != nil {
		tb.Fatal(err)
	}
	p := &countingProxy{path: filepath.Join(dir, "docker.sock"), c: proxyCounts{byRequest: map[string]int{}}}
	ln, err := net.Listen("unix", p.path)
	if err != nil {
		tb.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host = "http", "docker"
			r.Out.Host = r.In.Host
		},
		Transport:     benchUnixTransport(target),
		FlushInterval: -1, // stream events as they come
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.count(r)
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(func() {
		_ = srv.Close()
		_ = os.RemoveAll(dir)
	})
	return p
}

var (
	apiVersionPrefix = regexp.MustCompile(`^/v[0-9.]+/`)
	apiID            = regexp.MustCompile(`^[a-z0-9]{20,}$|^t[0-9]+-[0-9]+-[0-9]+(-lease)?$`)
)

func (p *countingProxy) count(r *http.Request) {
	path := apiVersionPrefix.ReplaceAllString(r.URL.Path, "/")
	parts := strings.Split(path, "/")
	for i, part := range parts {
		if apiID.MatchString(part) {
			parts[i] = "{id}"
		}
	}
	key := r.Method + " " + strings.Join(parts, "/")
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && path == "/events":
		p.c.streams++
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		p.c.reads++
	default:
		p.c.writes++
	}
	p.c.byRequest[key]++
}

// reset zeroes the counts except the event streams.
func (p *countingProxy) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.c = proxyCounts{streams: p.c.streams, byRequest: map[string]int{}}
}

// snapshot returns a copy of the counts.
func (p *countingProxy) snapshot() proxyCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.c
	c.byRequest = make(map[string]int, len(p.c.byRequest))
	for k, v := range p.c.byRequest {
		c.byRequest[k] = v
	}
	return c
}

// String lists the counts by request, for the log.
func (c proxyCounts) String() string {
	keys := make([]string, 0, len(c.byRequest))
	for k := range c.byRequest {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "%s ×%d; ", k, c.byRequest[k])
	}
	return sb.String()
}
