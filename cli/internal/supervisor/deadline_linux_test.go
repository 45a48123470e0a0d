package supervisor

import (
	"flag"
	"os"
	"syscall"
	"testing"
	"time"
)

// These tests run real guards: the test binary itself, started with GuardCommand as its first
// argument, runs Guard as lfp-swarm-lease child-guard does (TestMain), and the commands are real
// shells and sleeps.

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == GuardCommand {
		os.Exit(runGuard(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// runGuard parses the guard's arguments as the hidden command does, and runs it.
func runGuard(args []string) int {
	fs := flag.NewFlagSet(GuardCommand, flag.ContinueOnError)
	graceMs := fs.Int64("grace-ms", 10000, "")
	parent := fs.Int("parent", 0, "")
	reportFD := fs.Int("report-fd", 0, "")
	termFD := fs.Int("term-fd", 0, "")
	noCgroup := fs.Bool("no-cgroup", false, "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o := GuardOptions{Argv: fs.Args(), Grace: time.Duration(*graceMs) * time.Millisecond, Parent: *parent, Cgroup: !*noCgroup}
	if *reportFD > 0 {
		o.Report = OpenReport(*reportFD)
	}
	if *termFD > 0 {
		o.Term = OpenTerm(*termFD)
	}
	return Guard(o)
}

// testSpec runs script under sh behind a guard that is this test binary, with grace.
func testSpec(t *testing.T, script string, grace time.Duration) Spec {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{Argv: []string{"/bin/sh", "-c", script}, Env: os.Environ(), Grace: grace, Self: self, NoCgroup: true}
}

// startChild starts spec and makes sure nothing of it outlives the test.
func startChild(t *testing.T, spec Spec) *Child {
	t.Helper()
	c, err := Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(c.PID(), syscall.SIGCONT)
		if pid := c.CommandPID(0); pid > 0 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		c.Stop(10 * time.Millisecond)
	})
	return c
}

// awaitDone waits for the child to be done, failing after timeout.
func awaitDone(t *testing.T, c *Child, timeout time.Duration, what string) time.Duration {
	t.Helper()
	began := time.Now()
	select {
	case <-c.Done():
		return time.Since(began)
	case <-time.After(timeout):
		t.Fatalf("%s: the child is still running after %v", what, timeout)
		return 0
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	p, ok := readProcess(pid)
	return ok && p.pid == pid
}

// TestGuardStopsTheCommandByTheDeadlineOnItsOwn: the guard stops the command the grace period
// before the term's deadline without a word from run — run may be stopped or blocked — and
// reports why; a deadline too near to stop by starts nothing.
func TestGuardStopsTheCommandByTheDeadlineOnItsOwn(t *testing.T) {
	const grace = 200 * time.Millisecond
	spec := testSpec(t, "exec sleep 300", grace)
	spec.Deadline = DeadlineIn(func() time.Duration { return time.Second })
	began := time.Now()
	c := startChild(t, spec)
	awaitDone(t, c, 5*time.Second, "a deadline 1 s away")
	took := time.Since(began)
	r := c.Report()
	if r.StoppedBy != StopDeadline || r.ExitCode != 128+int(syscall.SIGTERM) {
		t.Fatalf("report %+v: want the command stopped by the deadline with SIGTERM", r)
	}
	// SIGTERM goes out 800 ms after the start; the command is gone by the deadline itself.
	if took < 800*time.Millisecond-20*time.Millisecond || took > time.Second {
		t.Fatalf("the command stopped %v after the start; want between 800 ms (deadline − grace) and 1 s (the deadline)", took)
	}

	spec.Deadline = DeadlineIn(func() time.Duration { return grace / 2 })
	c = startChild(t, spec)
	awaitDone(t, c, 5*time.Second, "a deadline within the grace period")
	if r := c.Report(); r.StoppedBy != StopDeadline || r.PID != 0 {
		t.Fatalf("report %+v: want nothing started, stopped by the deadline", r)
	}
}

// TestGuardFollowsTheRenewedDeadline: each SetDeadline moves the guard's deadline; the command
// runs past the first one and stops by the last.
func TestGuardFollowsTheRenewedDeadline(t *testing.T) {
	const grace = 100 * time.Millisecond
	spec := testSpec(t, "exec sleep 300", grace)
	spec.Deadline = DeadlineIn(func() time.Duration { return 400 * time.Millisecond })
	began := time.Now()
	c := startChild(t, spec)
	for i := 0; i < 5; i++ { // renewed every 200 ms for a second: 400 ms ahead each time
		time.Sleep(200 * time.Millisecond) // the renewal cadence under test
		c.SetDeadline(DeadlineIn(func() time.Duration { return 400 * time.Millisecond }))
	}
	select {
	case <-c.Done():
		t.Fatalf("the command stopped %v after the start, while its deadline was renewed", time.Since(began))
	default:
	}
	awaitDone(t, c, 2*time.Second, "after the last renewal")
	if r := c.Report(); r.StoppedBy != StopDeadline {
		t.Fatalf("report %+v: want stopped by the deadline", r)
	}
	if took := time.Since(began); took < 1300*time.Millisecond-20*time.Millisecond {
		t.Fatalf("the command stopped %v after the start, before the last deadline (1.4 s) minus the grace", took)
	}
}

// TestStopWithoutTheGuard: a stopped guard (SIGSTOP) cannot stop the command; Stop does it
// itself — SIGTERM at once, SIGKILL at the end of the grace period — and counts what it
// killed.
func TestStopWithoutTheGuard(t *testing.T) {
	const grace = 300 * time.Millisecond
	// The command ignores SIGTERM, so that only SIGKILL ends it.
	c := startChild(t, testSpec(t, "trap '' TERM; sleep 300 & wait; wait", grace))
	pid := c.CommandPID(5 * time.Second)
	if pid == 0 {
		t.Fatal("the guard reported no command")
	}
	var sleeper int
	waitFor(t, 5*time.Second, "the command's sleep", func() bool {
		for _, p := range groupMembers(pid) {
			if p.pid != pid {
				sleeper = p.pid
			}
		}
		return sleeper != 0
	})
	if err := syscall.Kill(c.PID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	stopped := make(chan bool, 1)
	go func() { stopped <- c.Stop(grace) }()
	waitFor(t, grace+time.Second, "the command and its sleep to be gone", func() bool { return !alive(pid) && !alive(sleeper) })
	if took := time.Since(began); took > grace+200*time.Millisecond {
		t.Fatalf("the command outlived the grace period by %v with its guard stopped", took-grace)
	}
	select {
	case killed := <-stopped:
		if !killed {
			t.Fatal("Stop reports nothing killed")
		}
	case <-time.After(stopBackstop + 5*time.Second):
		t.Fatal("Stop did not return")
	}
	if n := c.Leftovers(); n != 2 {
		t.Fatalf("run killed %d processes itself, want 2 (the command and its sleep)", n)
	}
}

// TestCountsWhenTheGuardDiesWhileStopping: a guard killed in the middle of a stop leaves true
// counts: what it terminated, from its progress reports, and what run then killed.
func TestCountsWhenTheGuardDiesWhileStopping(t *testing.T) {
	const grace = 5 * time.Second
	const sleepers = 5
	script := "trap '' TERM; for i in 1 2 3 4 5; do sleep 300 & done; wait"
	c := startChild(t, testSpec(t, script, grace))
	pid := c.CommandPID(5 * time.Second)
	waitFor(t, 5*time.Second, "the sleepers", func() bool { return len(groupMembers(pid)) == sleepers+1 })
	stopped := make(chan struct{})
	go func() { c.Stop(grace); close(stopped) }()
	// The guard acknowledges and reports its first counts; then it dies before the grace
	// period ends, with every process still alive (they ignore SIGTERM).
	waitFor(t, 5*time.Second, "the guard's progress report", func() bool { return isClosed(c.stopping) })
	waitFor(t, 5*time.Second, "the guard's count of the terminated", func() bool {
		// The count grows as the guard signals: wait until its report says all of them.
		return progressTerminated(c) == sleepers
	})
	if err := syscall.Kill(c.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not return after the guard died")
	}
	r := c.Report()
	if r.Done || r.Terminated != sleepers || c.Leftovers() != sleepers+1 {
		t.Fatalf("report %+v, run killed %d: want %d terminated by the guard (no final report), %d killed by run",
			r, c.Leftovers(), sleepers, sleepers+1)
	}
	// SIGKILLed, not yet reaped: gone within moments.
	waitFor(t, 5*time.Second, "the command's group to be gone", func() bool { return len(groupMembers(pid)) == 0 })
}

// progressTerminated is the count of terminated processes in the guard's last progress report.
func progressTerminated(c *Child) int {
	c.progressMu.Lock()
	defer c.progressMu.Unlock()
	return c.progress.Terminated
}

// waitFor polls ok every 5 ms until it holds, failing after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
	}
}

// TestGuardStopsTheCommandWhenTheControlPipeEnds: the end of the control pipe after the term
// (run gone, also where no parent-death signal exists) stops the command.
func TestGuardStopsTheCommandWhenTheControlPipeEnds(t *testing.T) {
	c := startChild(t, testSpec(t, "exec sleep 300", 200*time.Millisecond))
	if c.CommandPID(5*time.Second) == 0 {
		t.Fatal("no command")
	}
	c.control.close()
	awaitDone(t, c, 5*time.Second, "after the control pipe closed")
	if r := c.Report(); r.StoppedBy != StopSupervisorGone {
		t.Fatalf("report %+v: want stopped because the supervisor is gone", r)
	}
}
