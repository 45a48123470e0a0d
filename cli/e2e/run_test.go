package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// The supervisor tests on the file store: plain processes on one host, fast enough for every
// run of the suite. run_swarm_test.go repeats the essentials in a real Swarm service.

var (
	testChildOnce sync.Once
	testChildPath string
)

// testChild returns the testchild binary, built once.
func testChild(t *testing.T) string {
	t.Helper()
	testChildOnce.Do(func() { testChildPath = buildTestChild(t, filepath.Dir(binary)) })
	return testChildPath
}

// runProc is one `lfp-swarm-lease run` process.
type runProc struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// syncBuffer is a buffer safe for the process's writes and the test's reads.
type syncBuffer = leasetest.SyncBuffer

// fileRunEnv is the environment of run processes sharing one file-store election, with short
// timings: TTL 2 s, grace 300 ms, poll 100 ms.
func fileRunEnv(t *testing.T) (env []string, childLog string) {
	dir := t.TempDir()
	childLog = filepath.Join(dir, "events.log")
	return []string{
		"SWARM_LEASE_STORE=file://" + filepath.Join(dir, "store"),
		"SWARM_LEASE_NAMESPACE=" + leasetest.Namespace(t),
		"SWARM_LEASE_TTL_MS=2000",
		"SWARM_LEASE_SHUTDOWN_TIMEOUT_MS=300",
		"SWARM_LEASE_DEFAULT_POLL_MS=100",
		"SWARM_LEASE_MAX_CLOCK_SKEW_MS=100",
		"SWARM_LEASE_LISTEN=127.0.0.1:0",
		"TESTCHILD_LOG=" + childLog,
	}, childLog
}

// startRun starts `run [flags] -- testchild` as holder; it is SIGKILLed at the end of the test
// if still running.
func startRun(t *testing.T, env []string, holder string, flags ...string) *runProc {
	t.Helper()
	args := append(append([]string{"run"}, flags...), "--", testChild(t))
	return startProc(t, "run "+holder, append([]string{"SWARM_LEASE_HOLDER_ID=" + holder}, env...), args...)
}

// startProc starts the binary with args and env (plus PATH and a HOSTNAME that is no
// container); it is SIGKILLed at the end of the test if still running, and its output is
// logged if the test failed.
func startProc(t testing.TB, name string, env []string, args ...string) *runProc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOSTNAME=not-a-container"}, env...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &runProc{name: name, cmd: cmd, out: out, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("%s output:\n%s", name, out.String())
		}
	})
	return p
}

// wait waits for the process to exit and returns its exit code.
func (p *runProc) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		t.Fatalf("%s did not exit within %v; output:\n%s", p.name, timeout, p.out.String())
		return -1
	}
}

// processGone reports whether pid has exited (a zombie counts as gone: it runs nothing).
func processGone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

func waitGone(t *testing.T, pid int, timeout time.Duration, what string) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !processGone(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still runs after %v", what, pid, timeout)
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
}

func startsOf(events []check.ChildEvent) []check.ChildEvent {
	var out []check.ChildEvent
	for _, e := range events {
		if e.Event == "start" {
			out = append(out, e)
		}
	}
	return out
}

func TestRunFileOneLeaderHandoverAndFailover(t *testing.T) {
	leasetest.Long(t, "runs supervisors through a handover and a TTL's failover")
	env, childLog := fileRunEnv(t)
	procs := map[string]*runProc{}
	for _, h := range []string{"a", "b", "c"} {
		procs[h] = startRun(t, env, h)
	}
	events := waitForEvents(t, childLog, 10*time.Second, "the first child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 1 })
	// Three contenders, one child: give the others several poll intervals to (wrongly) start.
	time.Sleep(500 * time.Millisecond)
	if n := countEvents(readChildEvents(t, childLog), "start"); n != 1 {
		t.Fatalf("%d children started, want 1:\n%s", n, check.DescribeEvents(readChildEvents(t, childLog)))
	}
	first := startsOf(events)[0]

	// Graceful handover: SIGTERM the leader's supervisor.
	leader := procs[first.HolderID]
	if err := leader.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	events = waitForEvents(t, childLog, 5*time.Second, "a second child after SIGTERM", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 2 })
	if code := leader.wait(t, 5*time.Second); code != 0 {
		t.Fatalf("the terminated supervisor exited %d, want 0", code)
	}
	stop, _ := lastEvent(events, "stop")
	second := startsOf(events)[1]
	t.Logf("graceful handover: old child stopped → new child started in %v", second.Time().Sub(stop.Time()))
	delete(procs, first.HolderID)

	// Crash: SIGKILL the new leader's supervisor. Its child must die with it, and another
	// contender takes over once the lease expires.
	crashed := procs[second.HolderID]
	killedAt := time.Now()
	if err := crashed.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, second.PID, 5*time.Second, "the killed supervisor's child")
	events = waitForEvents(t, childLog, 10*time.Second, "a third child after SIGKILL", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 3 })
	third := startsOf(events)[2]
	t.Logf("crash failover: SIGKILL → new child in %v (TTL 2 s)", third.Time().Sub(killedAt))
	if third.HolderID == second.HolderID {
		t.Fatalf("the killed supervisor's identity leads again")
	}
	checkOneChildAtATime(t, events, nil)
}

func TestRunFileOnceAndChildExit(t *testing.T) {
	t.Run("once passes the child's code", func(t *testing.T) {
		env, childLog := fileRunEnv(t)
		p := startRun(t, append(env, "TESTCHILD_EXIT_AFTER_MS=100", "TESTCHILD_EXIT_CODE=7"), "a", "--once")
		if code := p.wait(t, 10*time.Second); code != 7 {
			t.Fatalf("run --once exited %d, want the child's 7", code)
		}
		if n := countEvents(readChildEvents(t, childLog), "start"); n != 1 {
			t.Fatalf("%d children, want 1", n)
		}
	})
	t.Run("once exits 0 after a clean child, logging JSON", func(t *testing.T) {
		env, _ := fileRunEnv(t)
		p := startRun(t, append(env, "TESTCHILD_EXIT_AFTER_MS=100"), "a", "--once", "--log-format", "json")
		if code := p.wait(t, 10*time.Second); code != 0 {
			t.Fatalf("run --once exited %d, want 0", code)
		}
		// --log-format json: every line of run's own is one JSON object.
		seen := map[string]bool{}
		for _, line := range strings.Split(p.out.String(), "\n") {
			var entry struct {
				Msg string `json:"msg"`
				PID int    `json:"pid"`
			}
			if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &entry) == nil {
				seen[entry.Msg] = true
				if entry.Msg == "child started" && entry.PID <= 0 {
					t.Errorf("child started without the command's own pid: %q", line)
				}
			} else if strings.Contains(line, "msg=") {
				t.Errorf("a text log line with --log-format json: %q", line)
			}
		}
		for _, msg := range []string{"contending", "acquired", "child started", "child exited", "released"} {
			if !seen[msg] {
				t.Errorf("no JSON line %q in:\n%s", msg, p.out.String())
			}
		}
	})
	t.Run("a child exiting by itself releases and contends again", func(t *testing.T) {
		env, childLog := fileRunEnv(t)
		startRun(t, append(env, "TESTCHILD_EXIT_AFTER_MS=100"), "a")
		events := waitForEvents(t, childLog, 10*time.Second, "a second term", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 2 })
		checkOneChildAtATime(t, events, nil)
	})
	t.Run("exit-on-child-exit", func(t *testing.T) {
		env, _ := fileRunEnv(t)
		p := startRun(t, append(env, "TESTCHILD_EXIT_AFTER_MS=100", "TESTCHILD_EXIT_CODE=3"), "a", "--exit-on-child-exit")
		if code := p.wait(t, 10*time.Second); code != 3 {
			t.Fatalf("run exited %d, want the child's 3", code)
		}
	})
}

func TestRunFileShutdownGraceExpiry(t *testing.T) {
	env, childLog := fileRunEnv(t)
	p := startRun(t, append(env, "TESTCHILD_IGNORE_TERM=1"), "a")
	events := waitForEvents(t, childLog, 10*time.Second, "the child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") == 1 })
	child := startsOf(events)[0]
	sent := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 5*time.Second); code != 0 {
		t.Fatalf("run exited %d, want 0", code)
	}
	took := time.Since(sent)
	waitGone(t, child.PID, time.Second, "the child that ignored SIGTERM")
	if countEvents(readChildEvents(t, childLog), "term-ignored") == 0 {
		t.Fatal("the child never received SIGTERM")
	}
	if took < 300*time.Millisecond {
		t.Fatalf("run exited %v after SIGTERM: before the 300 ms grace period", took)
	}
	t.Logf("SIGTERM ignored: child killed and run exited after %v (grace 300 ms)", took)
}

func TestRunFileKillLeavesNoOrphans(t *testing.T) {
	env, childLog := fileRunEnv(t)
	p := startRun(t, append(env, "TESTCHILD_GRANDCHILD=1"), "a")
	events := waitForEvents(t, childLog, 10*time.Second, "the child and its grandchild", func(ev []check.ChildEvent) bool { return countEvents(ev, "grandchild") == 1 })
	child := startsOf(events)[0]
	gc, _ := lastEvent(events, "grandchild")
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, child.PID, 5*time.Second, "the child of a SIGKILLed supervisor")
	waitGone(t, gc.Other, 5*time.Second, "the grandchild of a SIGKILLed supervisor")
}

func TestRunFileStepsDownWhenLeaseIsTaken(t *testing.T) {
	env, childLog := fileRunEnv(t)
	startRun(t, env, "a")
	events := waitForEvents(t, childLog, 10*time.Second, "the child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") == 1 })
	child := startsOf(events)[0]
	// An operator ends the term (release, with its fence): the supervisor must notice promptly
	// that its term is over, and stop its child.
	taken := time.Now()
	endTerm(t, env, "a", child.Fence)
	events = waitForEvents(t, childLog, 5*time.Second, "the child to stop", func(ev []check.ChildEvent) bool { return countEvents(ev, "stop") == 1 })
	stop, _ := lastEvent(events, "stop")
	t.Logf("lease taken → child stopped in %v", stop.Time().Sub(taken))
	if d := stop.Time().Sub(taken); d > 1500*time.Millisecond {
		t.Fatalf("the child stopped %v after the lease was taken; want well within the 2 s TTL", d)
	}
	if stop.PID != child.PID {
		t.Fatalf("unexpected stop event %+v", stop)
	}
}

// endTerm ends holder's live term fence from another process, as an operator would: a release
// with the term's fence, its capability whichever process sends it. (A live term of another
// process is never taken over but on evidence or expiry.)
func endTerm(t *testing.T, env []string, holder, fence string) {
	t.Helper()
	expectCode(t, cli(t, append([]string{"SWARM_LEASE_HOLDER_ID=" + holder}, env...), "release", fence), 0, "release of the supervisor's term")
}

func TestRunFileStepsDownByDeadlineWhenStoreFails(t *testing.T) {
	leasetest.Long(t, "waits for a supervisor's renew deadline")
	env, childLog := fileRunEnv(t)
	p := startRun(t, env, "a")
	events := waitForEvents(t, childLog, 10*time.Second, "the child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") == 1 })
	_ = events
	// Make the store unreadable: the holder can no longer renew, and must stop its child by its
	// own deadline (2 s TTL − 200 ms margin − 300 ms grace after its last renewal).
	var storeDir string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "SWARM_LEASE_STORE=file://"); ok {
			storeDir = v
		}
	}
	files, _ := filepath.Glob(filepath.Join(storeDir, "*.lease.json"))
	if len(files) != 1 {
		t.Fatalf("lease files: %v", files)
	}
	broken := time.Now()
	if err := os.WriteFile(files[0], []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	events = waitForEvents(t, childLog, 5*time.Second, "the child to stop by the deadline", func(ev []check.ChildEvent) bool { return countEvents(ev, "stop") == 1 })
	stop, _ := lastEvent(events, "stop")
	if d := stop.Time().Sub(broken); d > 2*time.Second {
		t.Fatalf("the child stopped %v after renewals began to fail; want before the 2 s TTL ran out", d)
	}
	t.Logf("store broken → child stopped in %v", stop.Time().Sub(broken))
	// A corrupt election is permanent: run exits 4 rather than overwrite it.
	if code := p.wait(t, 10*time.Second); code != 4 {
		t.Fatalf("run exited %d on a corrupt election, want 4", code)
	}
}
