package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// The guard's promise: nothing the command starts outlives the term or run — also a grandchild
// in a session of its own, or a double-forked daemon, which a process group does not hold.

// descendantDeadline bounds how long a grandchild may outlive the stop it is told of: it gets
// SIGTERM at once (within a /proc sweep), well inside the 300 ms grace period of fileRunEnv;
// the rest is slack for a loaded machine.
const descendantDeadline = 1500 * time.Millisecond

// cgroupWritable reports whether this host lets the guard make a cgroup v2 of its own, as the
// guard probes it: a directory in the cgroup v2 hierarchy that this process may create.
func cgroupWritable(t *testing.T) bool {
	t.Helper()
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return false
	}
	var mount, path string
	for _, line := range strings.Split(string(mounts), "\n") {
		if pre, post, ok := strings.Cut(line, " - "); ok && strings.HasPrefix(post, "cgroup2 ") {
			mount = strings.Fields(pre)[4]
		}
	}
	for _, line := range strings.Split(string(own), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path = p
		}
	}
	if mount == "" {
		return false
	}
	probe := filepath.Join(mount, path, "lfp-swarm-lease-test-probe-"+strconv.Itoa(os.Getpid()))
	if os.Mkdir(probe, 0o755) != nil {
		return false
	}
	return os.Remove(probe) == nil
}

// guardPID reads the guard's PID from run's "child started" log line.
func guardPID(t *testing.T, p *runProc) int {
	t.Helper()
	re := regexp.MustCompile(`msg="child started".* guard_pid=(\d+)`)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(p.out.String()); m != nil {
			pid, _ := strconv.Atoi(m[1])
			return pid
		}
	}
	t.Fatalf("no child started line in:\n%s", p.out.String())
	return 0
}

// killOnCleanup SIGKILLs pid at the end of the test, so that a failing test leaves nothing.
func killOnCleanup(t *testing.T, pid int) {
	t.Cleanup(func() {
		if !processGone(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

func TestRunStopsEveryDescendant(t *testing.T) {
	leasetest.Long(t, "stops process trees through the supervisor's grace periods")
	withCgroup := cgroupWritable(t)
	for _, cg := range []string{"auto", "off"} {
		for _, kind := range []string{"setsid", "daemon"} {
			for _, stop := range []string{"step-down", "SIGTERM of run", "SIGKILL of run"} {
				t.Run(cg+"/"+kind+"/"+stop, func(t *testing.T) {
					testStopsDescendant(t, cg, kind, stop, withCgroup && cg == "auto")
				})
			}
		}
	}
}

func testStopsDescendant(t *testing.T, cgroup, kind, stop string, inCgroup bool) {
	env, childLog := fileRunEnv(t)
	env = append(env, "SWARM_LEASE_CHILD_CGROUP="+cgroup, "TESTCHILD_GRANDCHILD="+kind)
	p := startRun(t, env, "a")
	events := waitForEvents(t, childLog, 10*time.Second, "the child and its grandchild", func(ev []check.ChildEvent) bool { return countEvents(ev, "grandchild") == 1 })
	child := startsOf(events)[0]
	gc, _ := lastEvent(events, "grandchild")
	killOnCleanup(t, gc.Other)
	if processGone(gc.Other) {
		t.Fatalf("the grandchild %d is not running", gc.Other)
	}
	cgroupOf := func(pid int) string {
		data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
		return string(data)
	}
	if in := strings.Contains(cgroupOf(gc.Other), "lfp-swarm-lease-guard-"); in != inCgroup {
		t.Fatalf("grandchild in the guard's cgroup: %v, want %v (%s)", in, inCgroup, cgroupOf(gc.Other))
	}
	guard := guardPID(t, p)

	stopped := time.Now()
	switch stop {
	case "step-down":
		// The term ended from outside (released): the holder steps down.
		endTerm(t, env, "a", child.Fence)
	case "SIGTERM of run":
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	case "SIGKILL of run":
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	waitGone(t, gc.Other, descendantDeadline+time.Since(stopped), "the "+kind+" grandchild after "+stop)
	t.Logf("%s grandchild gone %v after %s (grace 300 ms)", kind, time.Since(stopped).Round(time.Millisecond), stop)
	waitGone(t, child.PID, time.Second, "the child")
	waitGone(t, guard, 2*time.Second, "the guard")
	if dirs, _ := filepath.Glob("/sys/fs/cgroup/*/lfp-swarm-lease-guard-" + strconv.Itoa(guard)); len(dirs) > 0 {
		t.Fatalf("the guard's cgroup is left behind: %v", dirs)
	}
	if dirs, _ := filepath.Glob("/sys/fs/cgroup/lfp-swarm-lease-guard-" + strconv.Itoa(guard)); len(dirs) > 0 {
		t.Fatalf("the guard's cgroup is left behind: %v", dirs)
	}
}

// TestRunGuardKilledLeavesNothingInCgroup: a SIGKILLed guard cannot stop anything; with a
// cgroup, run kills what the guard left, wherever it went.
func TestRunGuardKilledLeavesNothingInCgroup(t *testing.T) {
	if !cgroupWritable(t) {
		if os.Getenv("CI") == "true" {
			t.Fatal("no writable cgroup v2 and CI=true: the cgroup guarantee must be tested in CI")
		}
		t.Skip("no writable cgroup v2 here")
	}
	env, childLog := fileRunEnv(t)
	p := startRun(t, append(env, "TESTCHILD_GRANDCHILD=setsid"), "a")
	events := waitForEvents(t, childLog, 10*time.Second, "the child and its grandchild", func(ev []check.ChildEvent) bool { return countEvents(ev, "grandchild") == 1 })
	child := startsOf(events)[0]
	gc, _ := lastEvent(events, "grandchild")
	killOnCleanup(t, gc.Other)
	guard := guardPID(t, p)
	killed := time.Now()
	if err := syscall.Kill(guard, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, gc.Other, descendantDeadline, "the grandchild of a SIGKILLed guard")
	waitGone(t, child.PID, time.Second, "the child of a SIGKILLed guard")
	t.Logf("guard SIGKILLed → grandchild gone in %v", time.Since(killed).Round(time.Millisecond))
}

// TestRunOnceReportsTheChildsOwnStatus: the child exits 0 leaving a grandchild that ignores
// SIGTERM; the guard kills it after the grace period, and --once still reports the child's 0.
func TestRunOnceReportsTheChildsOwnStatus(t *testing.T) {
	env, childLog := fileRunEnv(t)
	p := startRun(t, append(env, "TESTCHILD_EXIT_AFTER_MS=100", "TESTCHILD_GRANDCHILD=setsid", "TESTCHILD_GRANDCHILD_IGNORE_TERM=1"), "a", "--once")
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("run --once exited %d, want the child's own 0\n%s", code, p.out.String())
	}
	gc, ok := lastEvent(readChildEvents(t, childLog), "grandchild")
	if !ok {
		t.Fatal("no grandchild")
	}
	killOnCleanup(t, gc.Other)
	waitGone(t, gc.Other, time.Second, "the grandchild that ignored SIGTERM")
	if out := p.out.String(); !regexp.MustCompile(`msg="child exited".* exit_code=0 descendants_terminated=1 descendants_killed=1`).MatchString(out) {
		t.Fatalf("the log does not report the killed grandchild:\n%s", out)
	}
}

// TestRunSendsTheChildOneSIGTERM: while the guard waits out the grace period it keeps looking
// for descendants to stop, but a command that handles SIGTERM gets it once, not once per sweep.
func TestRunSendsTheChildOneSIGTERM(t *testing.T) {
	env, childLog := fileRunEnv(t)
	p := startRun(t, append(env, "TESTCHILD_IGNORE_TERM=1"), "a")
	waitForEvents(t, childLog, 10*time.Second, "the child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") == 1 })
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 5*time.Second); code != 0 {
		t.Fatalf("run exited %d, want 0", code)
	}
	if n := countEvents(readChildEvents(t, childLog), "term-ignored"); n != 1 {
		t.Fatalf("the child got SIGTERM %d times during the 300 ms grace period, want once", n)
	}
}
