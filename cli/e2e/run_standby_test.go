package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
)

// The idle guard: a follower keeps one guard process ready, exec'd but with no command, so that
// winning a term starts the command without first starting the guard. These tests check what
// it must never do: show the term before winning, outlive run, or stand in the way of a term.

// standbyDeadline bounds the wait for an idle guard to appear or go: it is started or replaced
// within milliseconds, with a back-off of at most a second in these tests.
const standbyDeadline = 5 * time.Second

// idleGuards lists the guard processes run (pid) has started that are still alive: its
// children running child-guard.
func idleGuards(t *testing.T, run int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || processGone(pid) || parentPID(pid) != run {
			continue
		}
		if strings.Contains(string(procFile(pid, "cmdline")), "child-guard") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// parentPID reads the parent of pid from /proc (0 when pid is gone).
func parentPID(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// procFile reads /proc/<pid>/<name>; NUL-separated files keep their NULs.
func procFile(pid int, name string) []byte {
	data, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), name))
	return data
}

// waitIdleGuard waits until run has exactly one guard other than not, and returns it.
func waitIdleGuard(t *testing.T, run *runProc, not int) int {
	t.Helper()
	deadline := time.Now().Add(standbyDeadline)
	for {
		guards := idleGuards(t, run.cmd.Process.Pid)
		if len(guards) == 1 && guards[0] != not {
			return guards[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: guards %v after %v, want one idle guard other than %d; output:\n%s", run.name, guards, standbyDeadline, not, run.out.String())
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
}

// startFollower starts holder a, waits for its child, then starts follower b and returns
// both with the children's log.
func startFollower(t *testing.T) (leader, follower *runProc, childLog string) {
	env, childLog := fileRunEnv(t)
	leader = startRun(t, env, "a")
	waitForEvents(t, childLog, 10*time.Second, "a's child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") == 1 })
	follower = startRun(t, env, "b")
	// Before startRun's SIGKILL: a leading follower stops its command itself. (A guard
	// SIGKILLed with its run would leave the command running.)
	t.Cleanup(func() {
		_ = follower.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-follower.done:
		case <-time.After(10 * time.Second):
		}
	})
	return leader, follower, childLog
}

// TestRunIdleGuardShowsNoTerm: a follower's idle guard shows nothing of a term in its arguments
// or environment, before winning and after; the command gets the won term's fence through it.
func TestRunIdleGuardShowsNoTerm(t *testing.T) {
	leader, follower, childLog := startFollower(t)
	guard := waitIdleGuard(t, follower, 0)
	first, _ := lastEvent(readChildEvents(t, childLog), "start")
	noTerm := func(when string) {
		t.Helper()
		for _, name := range []string{"cmdline", "environ"} {
			data := procFile(guard, name)
			if len(data) == 0 {
				t.Fatalf("%s: /proc/%d/%s is empty or unreadable", when, guard, name)
			}
			if bytes.Contains(data, []byte("_FENCE=")) || bytes.Contains(data, []byte(first.Fence)) {
				t.Fatalf("%s: the guard's %s shows a term: %q", when, name, data)
			}
		}
	}
	noTerm("idle")

	leader.cmd.Process.Signal(syscall.SIGTERM)
	events := waitForEvents(t, childLog, 10*time.Second, "b's child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") == 2 })
	next, _ := lastEvent(events, "start")
	if next.HolderID != "b" || fenceOf(t, next) <= fenceOf(t, first) {
		t.Fatalf("the second child is %+v after %+v", next, first)
	}
	if got := guardPID(t, follower); got != guard {
		t.Fatalf("b's child was started by guard %d, not by its idle guard %d; output:\n%s", got, guard, follower.out.String())
	}
	if !strings.Contains(follower.out.String(), "guard_prestarted=true") {
		t.Fatalf("b's log does not say the guard was prestarted:\n%s", follower.out.String())
	}
	noTerm("leading") // the term went over the pipe, to the command only
	if code := leader.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("the SIGTERMed leader exited %d", code)
	}
}

// TestRunIdleGuardExitsWithRun: SIGKILL of a follower's run takes its idle guard with it (the
// parent-death signal and the end of its pipe); SIGTERM of a follower too.
func TestRunIdleGuardExitsWithRun(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			_, follower, _ := startFollower(t)
			guard := waitIdleGuard(t, follower, 0)
			killOnCleanup(t, guard)
			if err := follower.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			waitGone(t, guard, standbyDeadline, "the idle guard of a "+sig.String()+"ed run")
			follower.wait(t, 10*time.Second)
		})
	}
}

// TestRunIdleGuardReplaced: an idle guard that dies is replaced — spaced by a back-off when it
// keeps dying — and the replacement starts the command when the follower wins.
func TestRunIdleGuardReplaced(t *testing.T) {
	leader, follower, childLog := startFollower(t)
	guard := 0
	for i := range 3 {
		next := waitIdleGuard(t, follower, guard)
		killOnCleanup(t, next)
		if err := syscall.Kill(next, syscall.SIGKILL); err != nil {
			t.Fatalf("kill idle guard %d: %v", i+1, err)
		}
		guard = next
	}
	guard = waitIdleGuard(t, follower, guard)
	out := follower.out.String()
	if n := strings.Count(out, "idle guard gone"); n != 3 || !strings.Contains(out, "backoff=100ms") || !strings.Contains(out, "backoff=200ms") {
		t.Fatalf("%d replacements logged, want 3 with back-offs 0, 100ms, 200ms:\n%s", n, out)
	}

	leader.cmd.Process.Signal(syscall.SIGTERM)
	waitForEvents(t, childLog, 10*time.Second, "b's child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") == 2 })
	if got := guardPID(t, follower); got != guard {
		t.Fatalf("b's child was started by guard %d, not by the replacement idle guard %d", got, guard)
	}
	checkOneChildAtATime(t, readChildEvents(t, childLog), nil)
}
