package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// The guard owns the deadline: whichever single process of the leader's tree is stopped or
// blocked — run (SIGSTOP, or a Ctrl-Z: SIGTSTP to its process group), the guard (SIGSTOP), or
// run's stderr (a pipe nobody reads) — the leader's command is gone before another replica's
// starts. Two replicas of run share one file store, with a 3 s TTL and a 500 ms shutdown
// timeout. Each runs in a mount namespace of its own, where the test can make the store
// read-only for that replica alone: its renewals fail while the other's writes go on. Every
// child locks one file for as long as it runs — a child that finds it locked logs "overlap",
// which the kernel makes exact however the other child dies — and writes heartbeats.

// pauseTTL and pauseGrace are the TTL and shutdown timeout of these scenarios.
const (
	pauseTTL   = 3 * time.Second
	pauseGrace = 500 * time.Millisecond
)

// pauseReps is how many times each scenario repeats: SWARM_LEASE_PAUSE_REPS (the acceptance
// run uses 20), else 2.
func pauseReps(t *testing.T) int {
	if n, err := strconv.Atoi(os.Getenv("SWARM_LEASE_PAUSE_REPS")); err == nil && n > 0 {
		return n
	}
	return 2
}

// requireMountNamespaces skips the test where the replicas cannot have mount namespaces of
// their own (not root, or no unshare/nsenter), and fails it there under CI=true.
func requireMountNamespaces(t *testing.T) {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "not root"
	}
	for _, tool := range []string{"unshare", "nsenter", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			why = tool + " not found (util-linux, mount)"
		}
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("the pause scenarios need mount namespaces (%s) and CI=true", why)
	}
	t.Skipf("the pause scenarios need mount namespaces: %s", why)
}

// pauseCluster is two replicas of run ("a", "b") on one file store.
type pauseCluster struct {
	t                       *testing.T
	store, childLog, beats  string
	replicas                map[string]*pauseReplica
	mu                      sync.Mutex
	stopped                 map[int]bool // stopped processes, continued at the end of the test
	gaps                    []time.Duration
	starts                  int // child starts seen so far
	lastLeader, lastStarted string
}

// pauseReplica is one run process, with its stderr on a pipe when the scenario needs one.
type pauseReplica struct {
	holder string
	proc   *runProc
	stderr *stderrPipe // nil: stderr goes to proc.out
}

func newPauseCluster(t *testing.T, stderrPipes bool) *pauseCluster {
	leasetest.Long(t, "pauses, stops and resumes supervisors in mount namespaces for several TTLs")
	requireMountNamespaces(t)
	dir := t.TempDir()
	c := &pauseCluster{t: t, store: filepath.Join(dir, "store"), childLog: filepath.Join(dir, "events.log"),
		beats: filepath.Join(dir, "beats"), replicas: map[string]*pauseReplica{}, stopped: map[int]bool{}}
	for _, d := range []string{c.store, c.beats} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		// Nothing stays stopped: a stopped guard would keep its command past the test.
		c.mu.Lock()
		defer c.mu.Unlock()
		for pid := range c.stopped {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	})
	for _, h := range []string{"a", "b"} {
		c.replicas[h] = c.start(h, stderrPipes)
	}
	c.awaitStart("")
	return c
}

// start starts replica holder: run inside a mount namespace of its own where the store is a
// bind mount of itself, which partition can make read-only there alone.
func (c *pauseCluster) start(holder string, stderrPipe bool) *pauseReplica {
	t := c.t
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOSTNAME=not-a-container",
		"SWARM_LEASE_STORE=file://" + c.store,
		"SWARM_LEASE_NAMESPACE=pause",
		"SWARM_LEASE_HOLDER_ID=" + holder,
		"SWARM_LEASE_TTL_MS=" + strconv.FormatInt(pauseTTL.Milliseconds(), 10),
		"SWARM_LEASE_SHUTDOWN_TIMEOUT_MS=" + strconv.FormatInt(pauseGrace.Milliseconds(), 10),
		"SWARM_LEASE_DEFAULT_POLL_MS=100",
		"SWARM_LEASE_MAX_CLOCK_SKEW_MS=100",
		"SWARM_LEASE_LISTEN=off",
		"TESTCHILD_LOG=" + c.childLog,
		"TESTCHILD_EXCLUSIVE=" + filepath.Join(filepath.Dir(c.store), "exclusive"),
		"TESTCHILD_HEARTBEAT_DIR=" + c.beats,
	}
	cmd := exec.Command("unshare", "--mount", "--propagation", "private",
		"sh", "-c", `mount --bind "$0" "$0" && exec "$@"`, c.store, binary, "run", "--", testChild(t))
	cmd.Env = env
	// A process group of its own, as a shell's job: SIGTSTP to the group reaches run alone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	r := &pauseReplica{holder: holder}
	if stderrPipe {
		r.stderr = newStderrPipe(t, out)
		cmd.Stderr = r.stderr.w
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &runProc{name: "run " + holder, cmd: cmd, out: out, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("%s output:\n%s", p.name, out.String())
		}
	})
	r.proc = p
	return r
}

// leader is the holder of the child that runs now, and the other replica.
func (c *pauseCluster) leader() (leader, follower string) {
	if c.lastLeader == "a" {
		return "a", "b"
	}
	return "b", "a"
}

// awaitStart waits for the next child to start, by a replica other than not ("" for any),
// then checks that no two children ever ran at once.
func (c *pauseCluster) awaitStart(not string) {
	c.t.Helper()
	events := waitForEvents(c.t, c.childLog, 4*pauseTTL, "the next child", func(ev []check.ChildEvent) bool {
		return countEvents(ev, "start") > c.starts || countEvents(ev, "overlap") > 0
	})
	c.checkNoOverlap(events)
	starts := startsOf(events)
	next := starts[c.starts]
	if not != "" && next.HolderID == not {
		c.t.Fatalf("the child that started is %s's again:\n%s", not, check.DescribeEvents(events))
	}
	c.starts = len(starts)
	c.lastLeader, c.lastStarted = next.HolderID, next.Fence
}

// checkNoOverlap fails on an "overlap" event, and on a child whose last heartbeat is later
// than the start of the child after it; it records the gaps between the two.
func (c *pauseCluster) checkNoOverlap(events []check.ChildEvent) {
	t := c.t
	t.Helper()
	if n := countEvents(events, "overlap"); n > 0 {
		t.Fatalf("%d children started while another still ran:\n%s", n, check.DescribeEvents(events))
	}
	last := c.lastBeats()
	starts := startsOf(events)
	for i := 1; i < len(starts); i++ {
		prev, next := starts[i-1], starts[i]
		beat, ok := last[prev.PID]
		if !ok {
			continue // it never beat: it did not run long enough to
		}
		if !beat.Before(next.Time()) {
			t.Fatalf("the child of fence %s (pid %d) still ran at %s, %v after the child of fence %s started:\n%s",
				prev.Fence, prev.PID, beat.Format("15:04:05.000"), beat.Sub(next.Time()), next.Fence, check.DescribeEvents(events))
		}
		if i == len(starts)-1 {
			c.gaps = append(c.gaps, next.Time().Sub(beat))
		}
	}
}

// lastBeats reads every child's last heartbeat, by PID.
func (c *pauseCluster) lastBeats() map[int]time.Time {
	c.t.Helper()
	files, err := os.ReadDir(c.beats)
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[int]time.Time{}
	for _, f := range files {
		_, pidText, _ := strings.Cut(f.Name(), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(c.beats, f.Name()))
		if err != nil {
			c.t.Fatal(err)
		}
		if ns, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil {
			out[pid] = time.Unix(0, ns)
		}
	}
	return out
}

// runPID is the PID of holder's run process.
func (c *pauseCluster) runPID(holder string) int { return c.replicas[holder].proc.cmd.Process.Pid }

// guardPID is the PID of the guard of the child that runs now: the child's parent.
func (c *pauseCluster) guardPID() int {
	c.t.Helper()
	starts := startsOf(readChildEvents(c.t, c.childLog))
	pid := parentPID(starts[len(starts)-1].PID)
	if pid == 0 {
		c.t.Fatal("the running child has no parent: it is gone")
	}
	return pid
}

// signal sends sig to pid (a process group if negative), remembering what it stops.
func (c *pauseCluster) signal(pid int, sig syscall.Signal) {
	c.t.Helper()
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		c.t.Fatalf("kill %d %v: %v", pid, sig, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch sig {
	case syscall.SIGSTOP, syscall.SIGTSTP:
		c.stopped[pid] = true
	case syscall.SIGCONT:
		delete(c.stopped, pid)
	}
}

// partition makes the store read-only for holder alone (its renewals fail); heal undoes it.
func (c *pauseCluster) partition(holder string) { c.remount(holder, "ro") }
func (c *pauseCluster) heal(holder string)      { c.remount(holder, "rw") }

func (c *pauseCluster) remount(holder, mode string) {
	c.t.Helper()
	out, err := exec.Command("nsenter", "-t", strconv.Itoa(c.runPID(holder)), "-m",
		"mount", "-o", "remount,bind,"+mode, c.store).CombinedOutput()
	if err != nil {
		c.t.Fatalf("remount %s's store %s: %v\n%s", holder, mode, err, out)
	}
}

// followingLines counts holder's "following" log lines; awaitFollowing waits for one more than
// mark: the replica is back, reading the store and following the leader.
func (c *pauseCluster) followingLines(holder string) int {
	return strings.Count(c.replicas[holder].proc.out.String(), "msg=following")
}

func (c *pauseCluster) awaitFollowing(holder string, mark int) {
	c.t.Helper()
	for deadline := time.Now().Add(4 * pauseTTL); c.followingLines(holder) <= mark; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			c.t.Fatalf("%s does not follow again", holder)
		}
	}
}

// report logs how long after the last heartbeat of each stopped child the next one started.
func (c *pauseCluster) report(scenario string) {
	gaps := append([]time.Duration(nil), c.gaps...)
	if len(gaps) == 0 {
		return
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	c.t.Logf("%s: %d takeovers, 0 overlaps; old child's last heartbeat → next child's start: min %v, median %v, max %v",
		scenario, len(gaps), gaps[0].Round(time.Millisecond), gaps[len(gaps)/2].Round(time.Millisecond), gaps[len(gaps)-1].Round(time.Millisecond))
}

// stderrPipe is a replica's stderr as a pipe the test reads into out, and can stop reading
// from and fill, as a log driver that blocked would leave it.
type stderrPipe struct {
	r, w   *os.File
	filler *os.File // a non-blocking way into the pipe, for fill
	out    *syncBuffer
	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
	parked bool
}

func newStderrPipe(t *testing.T, out *syncBuffer) *stderrPipe {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// A description of its own (exec makes w's blocking, and the flag is the description's):
	// fill's writes must time out where run's block.
	filler, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(w.Fd())), os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := &stderrPipe{r: r, w: w, filler: filler, out: out}
	p.cond = sync.NewCond(&p.mu)
	go p.read()
	t.Cleanup(func() { r.Close(); w.Close(); filler.Close() })
	return p
}

func (p *stderrPipe) read() {
	buf := make([]byte, 64<<10)
	for {
		p.mu.Lock()
		for p.paused {
			p.parked = true
			p.cond.Broadcast()
			p.cond.Wait()
		}
		p.parked = false
		p.mu.Unlock()
		// A short deadline, so that a pause takes effect without a read in flight.
		_ = p.r.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		n, err := p.r.Read(buf)
		_, _ = p.out.Write(bytes.ReplaceAll(buf[:n], []byte{0}, nil)) // fill's bytes are NULs
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return
		}
	}
}

// fill stops reading and fills the pipe: every later write to it blocks (or is dropped).
func (p *stderrPipe) fill(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	p.paused = true
	for !p.parked {
		p.cond.Wait()
	}
	p.mu.Unlock()
	line := make([]byte, 1024)
	for {
		_ = p.filler.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		if _, err := p.filler.Write(line); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return // full
			}
			t.Fatal(err)
		}
	}
}

// drain reads the pipe again.
func (p *stderrPipe) drain() {
	p.mu.Lock()
	p.paused = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

// TestRunPausedLeaderNeverOverlaps: run stopped by SIGSTOP, the guard takes the command down by
// the term's deadline on its own clock; the replica recovers when continued.
func TestRunPausedLeaderNeverOverlaps(t *testing.T) {
	c := newPauseCluster(t, false)
	for i := 0; i < pauseReps(t); i++ {
		leader, _ := c.leader()
		mark := c.followingLines(leader)
		c.signal(c.runPID(leader), syscall.SIGSTOP)
		c.awaitStart(leader)
		c.signal(c.runPID(leader), syscall.SIGCONT)
		c.awaitFollowing(leader, mark)
	}
	c.report("SIGSTOP run")
}

// TestRunSuspendedGroupNeverOverlaps: a Ctrl-Z of run in a shell (SIGTSTP to its process
// group) stops run, not the guard nor the command, which are in groups of their own.
func TestRunSuspendedGroupNeverOverlaps(t *testing.T) {
	c := newPauseCluster(t, false)
	for i := 0; i < pauseReps(t); i++ {
		leader, _ := c.leader()
		mark := c.followingLines(leader)
		c.signal(-c.runPID(leader), syscall.SIGTSTP)
		c.awaitStart(leader)
		c.signal(-c.runPID(leader), syscall.SIGCONT)
		c.awaitFollowing(leader, mark)
	}
	c.report("SIGTSTP to run's group")
}

// TestRunStoppedGuardNeverOverlaps: with the guard stopped, run — which loses its term, cut from
// the store — stops the command's processes itself, SIGKILL included, by the deadline.
func TestRunStoppedGuardNeverOverlaps(t *testing.T) {
	c := newPauseCluster(t, false)
	for i := 0; i < pauseReps(t); i++ {
		leader, _ := c.leader()
		mark := c.followingLines(leader)
		guard := c.guardPID()
		c.signal(guard, syscall.SIGSTOP)
		c.partition(leader)
		c.awaitStart(leader)
		c.signal(guard, syscall.SIGCONT)
		c.heal(leader)
		c.awaitFollowing(leader, mark)
	}
	c.report("SIGSTOP the guard")
}

// TestRunFullStderrNeverOverlaps: a leader whose stderr nobody reads (a blocked log driver) —
// full when its term starts, so that its "child started" line cannot be written — and which is
// then cut from the store, still stops its command by the deadline: no log line waits for the
// reader.
func TestRunFullStderrNeverOverlaps(t *testing.T) {
	c := newPauseCluster(t, true)
	for i := 0; i < pauseReps(t); i++ {
		// The follower's stderr is full when it wins its term: the leader is cut from the store
		// and steps down, and heals to follow again.
		leader, follower := c.leader()
		c.replicas[follower].stderr.fill(t)
		mark := c.followingLines(leader)
		c.partition(leader)
		c.awaitStart(leader)
		c.heal(leader)
		c.awaitFollowing(leader, mark)
		// The new leader, stderr full, is cut from the store in turn.
		mark = c.followingLines(follower)
		c.partition(follower)
		c.awaitStart(follower)
		c.heal(follower)
		c.replicas[follower].stderr.drain()
		c.awaitFollowing(follower, mark)
		// What run logged while nobody read waited in its queue, and arrives now.
		if out := c.replicas[follower].proc.out.String(); !strings.Contains(out, `msg="child stopped"`) {
			t.Fatalf("%s's log lacks the lines of the term it led with its stderr full:\n%s", follower, out)
		}
	}
	c.report("stderr pipe full")
}
