//go:build unix

// Package supervisor runs the leader's child process: in a process group of its own, behind a
// small guard process that makes sure nothing the child started outlives the supervisor.
//
// The process tree is: supervisor → guard (a hidden mode of the same binary) → CMD (leader of a
// new process group and, where a cgroup v2 is writable, alone in a cgroup of its own) and
// everything CMD starts. On Linux the guard is a child subreaper — every orphaned descendant
// becomes its child, also one that called setsid — and receives SIGTERM when the supervisor dies
// (parent-death signal). Whenever it stops — told to, supervisor dead, or CMD exited — it stops
// every descendant: SIGTERM to the group, to each descendant found in /proc and to what it
// adopts meanwhile, then after the grace period SIGKILL to all of them and the whole cgroup. If
// the guard itself is SIGKILLed, the supervisor kills what is left in the cgroup (or the group).
// Without the guard a SIGKILLed supervisor would leave its child — and its child's children —
// running as a second leader.
//
// Neither process trusts the other to be responsive. The guard knows the term's deadline (the
// supervisor sends it with the term and after every renewal, on the control pipe) and stops the
// command by it on its own clock, whatever the supervisor is doing — stopped, or blocked on a
// full stderr. And a supervisor whose guard does not acknowledge a stop (the guard is stopped)
// signals the command's processes itself, SIGKILL included, by the end of the grace period.
package supervisor

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// GuardCommand is the hidden command of the binary that runs the guard.
const GuardCommand = "child-guard"

// reportFD is the guard's file descriptor of the report pipe (the first of ExtraFiles), termFD
// that of its control pipe (the second), and holdFD that of the incarnation's lock (the third,
// when there is one).
const (
	reportFD = 3
	termFD   = 4
	holdFD   = 5
)

// stopBackstop is how long Stop waits beyond the grace period for the guard, which kills what
// is left itself at the end of the grace period, before killing the guard too.
const stopBackstop = 2 * time.Second

// killSlack is how long after the grace period Stop leaves to a guard that acknowledged the
// stop before it sends SIGKILL itself: the guard's own SIGKILL comes first, so that its counts
// stay true, and the lease's safety margin (a tenth of the TTL) covers the difference.
const killSlack = 25 * time.Millisecond

// ackWait is how long Stop waits for the guard to acknowledge its SIGTERM before signalling the
// command itself: a guard that does not answer (stopped, or starved of CPU) must not keep the
// command running, and one that answers late costs the command a second SIGTERM at most.
func ackWait(grace time.Duration) time.Duration { return min(grace/4, 100*time.Millisecond) }

// Spec describes a child to start.
type Spec struct {
	// Argv is the command and its arguments.
	Argv []string
	// Env is the child's whole environment.
	Env []string
	// Stdout and Stderr receive the child's output (default: the supervisor's own).
	Stdout, Stderr io.Writer
	// Grace is the time between SIGTERM and SIGKILL, for the guard's own stop.
	Grace time.Duration
	// NoCgroup keeps the command out of a cgroup of its own even where one can be created.
	NoCgroup bool
	// Self is the path of this binary, which runs the guard (default os.Executable()).
	Self string
	// Deadline is the term's deadline (zero: none). The guard stops the command Grace before
	// it, unless Child.SetDeadline moves it, and does not start a command it could not stop
	// by then.
	Deadline Deadline
	// Hold, when set, is the incarnation's lock (a file run holds locked): the guard and the
	// command inherit it, so that it stays locked for as long as any of them lives — a
	// restarted run takes it free as the proof that they are gone.
	Hold *os.File
}

// Child is a running child process group.
type Child struct {
	guard   *exec.Cmd
	command string
	pid     int
	done    chan struct{}
	state   *os.ProcessState
	report  Report
	// control is run's end of the guard's control pipe.
	control *controlWriter
	// killed holds the processes the supervisor itself had to kill: after the guard died, or
	// because it did not do so by the end of the grace period.
	killedMu sync.Mutex
	killed   map[int]bool
	// reapMu is held while the guard is reaped and while the supervisor signals it or scans its
	// descendants, so that the PID it names is never another process's; reaped says it is gone.
	reapMu sync.Mutex
	reaped bool
	// commandPID is the command's PID once the guard reported it; hasPID is closed then, or
	// when the guard exited without reporting one.
	commandPID atomic.Int64
	hasPID     chan struct{}
	pidOnce    sync.Once
	// stopping is closed when the guard acknowledges a stop; progress is its last count of
	// what it signalled, kept for a guard that dies before its final report.
	stopping     chan struct{}
	stoppingOnce sync.Once
	progressMu   sync.Mutex
	progress     Report
}

// Start starts the guard and, through it, the child: a guard started and launched at once.
func Start(spec Spec) (*Child, error) {
	s, err := Prestart(spec)
	if err != nil {
		return nil, err
	}
	c, err := s.Launch(spec.Env, spec.Deadline)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("supervisor: start %q: %w", spec.Argv[0], err)
	}
	return c, nil
}

// startGuard starts the guard process, which waits for the term on its control pipe
// (c.control) before it starts the command.
func startGuard(spec Spec) (c *Child, err error) {
	if len(spec.Argv) == 0 {
		return nil, errors.New("supervisor: no command to run")
	}
	self := spec.Self
	if self == "" {
		if self, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("supervisor: find own executable: %w", err)
		}
	}
	args := []string{GuardCommand, "--grace-ms", strconv.FormatInt(spec.Grace.Milliseconds(), 10),
		"--parent", strconv.Itoa(os.Getpid()), "--report-fd", strconv.Itoa(reportFD), "--term-fd", strconv.Itoa(termFD)}
	if spec.NoCgroup {
		args = append(args, "--no-cgroup")
	}
	if spec.Hold != nil {
		args = append(args, "--hold-fd", strconv.Itoa(holdFD))
	}
	cmd := exec.Command(self, append(append(args, "--"), spec.Argv...)...)
	cmd.Env = spec.Env
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = cmp.Or[io.Writer](spec.Stdout, os.Stdout), cmp.Or[io.Writer](spec.Stderr, os.Stderr)
	cmd.SysProcAttr = guardAttr()
	reports, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("supervisor: report pipe: %w", err)
	}
	termR, termW, err := os.Pipe()
	if err != nil {
		reports.Close()
		w.Close()
		return nil, fmt.Errorf("supervisor: control pipe: %w", err)
	}
	cmd.ExtraFiles = []*os.File{w, termR}
	if spec.Hold != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, spec.Hold)
	}
	err = cmd.Start()
	w.Close()
	termR.Close()
	if err != nil {
		reports.Close()
		termW.Close()
		return nil, fmt.Errorf("supervisor: start %q: %w", spec.Argv[0], err)
	}
	c = &Child{guard: cmd, command: spec.Argv[0], pid: cmd.Process.Pid, done: make(chan struct{}), report: Report{ExitCode: -1},
		control: newControlWriter(termW), hasPID: make(chan struct{}), stopping: make(chan struct{})}
	go func() {
		// The pipe ends when the guard exits (the command does not inherit it), or the
		// final report arrives: the guard sends it once it has no descendant left, so the
		// term's command is gone then — the guard's own exit (removing an empty cgroup,
		// unmapping its memory) need not delay the release of the lease.
		done := c.readReports(reports)
		c.pidOnce.Do(func() { close(c.hasPID) })
		if done {
			c.control.close()
			// The reaper is started before Done is closed, not after: the goroutine started
			// last runs first on this thread, and the reaper blocks it in waitid until the guard
			// has exited, while the waiter on Done — the lease's release — would have to wait for
			// another thread to take it over.
			go c.reap()
			close(c.done)
			return
		}
		c.reap()
		c.state = cmd.ProcessState
		// The guard died (SIGKILL) before it could stop what it guarded: do it here. What it
		// had signalled until then is known from its progress reports.
		c.countKilled(c.killLeftovers())
		c.progressMu.Lock()
		p := c.progress
		c.progressMu.Unlock()
		c.report.Terminated, c.report.Killed, c.report.CommandKilled = p.Terminated, p.Killed, p.CommandKilled
		c.control.close()
		close(c.done)
	}()
	return c, nil
}

// reap waits for the guard to exit and reaps it. Where the exit can be learnt without reaping
// (Linux: waitid with WNOWAIT), the reaping itself happens under reapMu, so that Stop never
// signals a PID that has been reaped and may be reused.
func (c *Child) reap() {
	if !exitedWithoutReaping(c.pid) {
		_ = c.guard.Wait()
		c.reapMu.Lock()
		c.reaped = true
		c.reapMu.Unlock()
		return
	}
	c.reapMu.Lock()
	defer c.reapMu.Unlock()
	_ = c.guard.Wait()
	c.reaped = true
}

// signalGuard sends sig to the guard unless it has been reaped.
func (c *Child) signalGuard(sig syscall.Signal) {
	c.reapMu.Lock()
	defer c.reapMu.Unlock()
	if !c.reaped {
		_ = syscall.Kill(c.pid, sig)
	}
}

// countKilled adds the processes the supervisor killed itself, each once.
func (c *Child) countKilled(pids []int) {
	c.killedMu.Lock()
	defer c.killedMu.Unlock()
	if c.killed == nil {
		c.killed = map[int]bool{}
	}
	for _, pid := range pids {
		c.killed[pid] = true
	}
}

// readReports reads the guard's reports until the final one (done true), or until the guard
// exits without it (false). The pipe is closed then: a guard that still writes after its final
// report gets EPIPE, which it ignores.
func (c *Child) readReports(r *os.File) (done bool) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var rep Report
		if json.Unmarshal(sc.Bytes(), &rep) != nil {
			continue
		}
		switch {
		case rep.Done:
			rep.PID, rep.Cgroup = c.report.PID, c.report.Cgroup
			c.report = rep
			return true
		case rep.Stopping:
			c.progressMu.Lock()
			c.progress = rep
			c.progressMu.Unlock()
			c.stoppingOnce.Do(func() { close(c.stopping) })
		default:
			c.report.PID, c.report.Cgroup = rep.PID, rep.Cgroup
			if rep.PID > 0 {
				c.commandPID.Store(int64(rep.PID))
				c.pidOnce.Do(func() { close(c.hasPID) })
			}
		}
	}
	return false
}

// killLeftovers kills what a dead guard left: its cgroup (all the command started, wherever
// it went) and the command's process group — the guard's orphans went to another parent, so
// no scan of descendants finds them any more. It returns the processes it killed. (A guard
// killed between starting the command and reporting its PID, without a cgroup, leaves a
// command nothing names: docs/safety.md §3a.)
func (c *Child) killLeftovers() []int {
	var killed []int
	if dir, err := guardCgroupDir(c.pid); err == nil {
		for _, p := range cgroupMembers(dir) {
			killed = append(killed, p.pid)
		}
		removeCgroup(dir)
	}
	if pgid := int(c.commandPID.Load()); pgid > 0 {
		for _, p := range groupMembers(pgid) {
			if syscall.Kill(p.pid, syscall.SIGKILL) == nil {
				killed = append(killed, p.pid)
			}
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // what the scan may have missed
	}
	return killed
}

// signalTree sends sig, without the guard, to every process of the command's tree that the
// supervisor can find: the cgroup's members, the command's process group, and the guard's
// descendants in /proc (the guard adopts orphans: while it lives, stopped or not, they are its
// children). SIGKILL also goes to the whole cgroup. It returns how many processes it signalled.
func (c *Child) signalTree(sig syscall.Signal) []int {
	c.reapMu.Lock()
	defer c.reapMu.Unlock()
	pgid := int(c.commandPID.Load())
	// Each process once: a command that takes a second SIGTERM for "stop now" must not get one.
	targets := map[int]bool{}
	if !c.reaped { // else its PID may be another process's, and its descendants another tree
		for _, p := range processTree(c.pid, pgid) {
			targets[p.pid] = true
		}
	} else if pgid > 0 {
		for _, p := range groupMembers(pgid) {
			targets[p.pid] = true
		}
	}
	dir, cgErr := guardCgroupDir(c.pid)
	if cgErr == nil {
		for _, p := range cgroupMembers(dir) {
			targets[p.pid] = true
		}
	}
	var signalled []int
	for pid := range targets {
		if syscall.Kill(pid, sig) == nil {
			signalled = append(signalled, pid)
		}
	}
	if sig == syscall.SIGKILL {
		// What the scans may have missed (a process forked meanwhile): SIGKILL twice is harmless.
		if cgErr == nil {
			killCgroup(dir)
		}
		if pgid > 0 {
			_ = syscall.Kill(-pgid, sig)
		}
	}
	return signalled
}

// SetDeadline hands the guard the term's new deadline (after a renewal) without waiting: the
// guard stops the command Grace before it unless a later one comes.
func (c *Child) SetDeadline(d Deadline) { c.control.send(d) }

// Started is closed once the command's PID is known (CommandPID no longer waits), or the guard
// has exited without one.
func (c *Child) Started() <-chan struct{} { return c.hasPID }

// CommandPID is the command's own process ID as soon as the guard has started it, waiting up
// to timeout for the guard's report; 0 when it did not come (the command could not start, or
// the guard is slow or gone).
func (c *Child) CommandPID(timeout time.Duration) int {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-c.hasPID:
	case <-t.C:
	}
	return int(c.commandPID.Load())
}

// PID returns the guard's process ID.
func (c *Child) PID() int { return c.pid }

// Done is closed when the child and everything it started are gone: on the guard's final report,
// which it sends once it has no descendant left (the guard itself may still be exiting, and is
// reaped meanwhile), or when the guard exited without one.
func (c *Child) Done() <-chan struct{} { return c.done }

// ExitCode is the child's exit code once Done is closed: its own code, or 128 + the signal
// that killed it — never the status of a descendant killed after it exited. Without a report
// from the guard (it was killed) it is the guard's status.
func (c *Child) ExitCode() int {
	if c.report.Done {
		return c.report.ExitCode
	}
	return ExitCode(c.state)
}

// Report is the guard's final report once Done is closed (Done false if the guard died before
// it could report).
func (c *Child) Report() Report { return c.report }

// StartError is the reason the command could not be started, once Done is closed: a
// *StartError with the exit code 126 or 127, or nil.
func (c *Child) StartError() error {
	if c.report.StartError == "" {
		return nil
	}
	return &StartError{Command: c.command, Code: c.report.ExitCode, Err: errors.New(c.report.StartError)}
}

// Leftovers is how many processes the supervisor killed itself: after the guard died, or
// because the guard had not by the end of the grace period.
func (c *Child) Leftovers() int {
	c.killedMu.Lock()
	defer c.killedMu.Unlock()
	return len(c.killed)
}

// ExitCode maps a process state to a shell-style exit code.
func ExitCode(st *os.ProcessState) int {
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// Stop asks the guard to stop the child and all it started — SIGTERM, the grace period,
// SIGKILL — and returns once the guard has exited. A guard that does not acknowledge within
// ackWait is not relied upon: Stop sends SIGTERM to the command's processes itself, and SIGKILL
// at the end of the grace period (just after it, if the guard acknowledged), so that a stopped
// guard cannot keep the command past the term. A guard that has not finished within
// stopBackstop after that is killed. It reports whether anything needed SIGKILL.
func (c *Child) Stop(grace time.Duration) (killed bool) {
	select {
	case <-c.done:
		return c.killedAny()
	default:
	}
	began := time.Now()
	end := grace
	c.signalGuard(syscall.SIGTERM)
	acked := await(c.stopping, ackWait(grace))
	if isClosed(c.done) {
		return c.killedAny()
	}
	if acked {
		end += killSlack
	} else {
		c.signalTree(syscall.SIGTERM)
	}
	if await(c.done, end-time.Since(began)) {
		return c.killedAny()
	}
	c.countKilled(c.signalTree(syscall.SIGKILL))
	if await(c.done, stopBackstop) {
		return true
	}
	c.signalGuard(syscall.SIGKILL)
	// A guard SIGKILLed exits at once unless the kernel holds it (uninterruptible I/O): do not
	// wait for ever, the command's processes have had SIGKILL already.
	await(c.done, guardExitWait)
	return true
}

// guardExitWait bounds Stop's wait for a guard it SIGKILLed.
const guardExitWait = 10 * time.Second

// await waits up to d for ch to be closed, and reports whether it was.
func await(ch <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		return isClosed(ch)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (c *Child) killedAny() bool {
	return c.report.CommandKilled || c.report.Killed > 0 || c.Leftovers() > 0
}
