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
package supervisor

import (
	"bufio"
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

// reportFD is the guard's file descriptor of the report pipe (the first of ExtraFiles), and
// termFD that of a standby guard's term pipe (the second).
const (
	reportFD = 3
	termFD   = 4
)

// stopBackstop is how long Stop waits beyond the grace period for the guard, which kills what
// is left itself at the end of the grace period, before killing the guard too.
const stopBackstop = 2 * time.Second

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
}

// Child is a running child process group.
type Child struct {
	guard   *exec.Cmd
	command string
	pid     int
	done    chan struct{}
	state   *os.ProcessState
	report  Report
	// leftovers counts the processes the supervisor itself had to kill after the guard died.
	leftovers int
	// commandPID is the command's PID once the guard reported it; hasPID is closed then, or
	// when the guard exited without reporting one.
	commandPID atomic.Int64
	hasPID     chan struct{}
	pidOnce    sync.Once
}

// Start starts the guard and, through it, the child.
func Start(spec Spec) (*Child, error) {
	c, _, err := startGuard(spec, false)
	return c, err
}

// startGuard starts the guard process. With standby the guard waits for the term on a pipe
// before it starts the command: termW is that pipe's write end, nil otherwise.
func startGuard(spec Spec, standby bool) (c *Child, termW *os.File, err error) {
	if len(spec.Argv) == 0 {
		return nil, nil, errors.New("supervisor: no command to run")
	}
	self := spec.Self
	if self == "" {
		if self, err = os.Executable(); err != nil {
			return nil, nil, fmt.Errorf("supervisor: find own executable: %w", err)
		}
	}
	args := []string{GuardCommand, "--grace-ms", strconv.FormatInt(spec.Grace.Milliseconds(), 10),
		"--parent", strconv.Itoa(os.Getpid()), "--report-fd", strconv.Itoa(reportFD)}
	if spec.NoCgroup {
		args = append(args, "--no-cgroup")
	}
	if standby {
		args = append(args, "--term-fd", strconv.Itoa(termFD))
	}
	cmd := exec.Command(self, append(append(args, "--"), spec.Argv...)...)
	cmd.Env = spec.Env
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = orDefault(spec.Stdout, os.Stdout), orDefault(spec.Stderr, os.Stderr)
	cmd.SysProcAttr = guardAttr()
	reports, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("supervisor: report pipe: %w", err)
	}
	cmd.ExtraFiles = []*os.File{w}
	var termR *os.File
	if standby {
		if termR, termW, err = os.Pipe(); err != nil {
			reports.Close()
			w.Close()
			return nil, nil, fmt.Errorf("supervisor: term pipe: %w", err)
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, termR)
	}
	err = cmd.Start()
	w.Close()
	if termR != nil {
		termR.Close()
	}
	if err != nil {
		reports.Close()
		if termW != nil {
			termW.Close()
		}
		return nil, nil, fmt.Errorf("supervisor: start %q: %w", spec.Argv[0], err)
	}
	c = &Child{guard: cmd, command: spec.Argv[0], pid: cmd.Process.Pid, done: make(chan struct{}), report: Report{ExitCode: -1},
		hasPID: make(chan struct{})}
	go func() {
		// The pipe ends when the guard exits (the command does not inherit it), or the
		// final report arrives: the guard sends it once it has no descendant left, so the
		// term's command is gone then — the guard's own exit (removing an empty cgroup,
		// unmapping its memory) need not delay the release of the lease.
		done := c.readReports(reports)
		c.pidOnce.Do(func() { close(c.hasPID) })
		if done {
			close(c.done)
			go func() { _ = cmd.Wait() }()
			return
		}
		_ = cmd.Wait()
		c.state = cmd.ProcessState
		// The guard died (SIGKILL) before it could stop what it guarded: do it here.
		c.leftovers = c.killLeftovers()
		close(c.done)
	}()
	return c, termW, nil
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
		if rep.Done {
			rep.PID, rep.Cgroup = c.report.PID, c.report.Cgroup
			c.report = rep
			return true
		}
		c.report.PID, c.report.Cgroup = rep.PID, rep.Cgroup
		if rep.PID > 0 {
			c.commandPID.Store(int64(rep.PID))
			c.pidOnce.Do(func() { close(c.hasPID) })
		}
	}
	return false
}

// killLeftovers kills what a dead guard left: its cgroup (all the command started, wherever
// it went) or, without one, the command's process group. It returns how many were killed.
func (c *Child) killLeftovers() int {
	dir, err := guardCgroupDir(c.pid)
	if err == nil {
		if n := removeCgroup(dir); n > 0 {
			return n
		}
	}
	if c.report.PID > 0 && syscall.Kill(-c.report.PID, syscall.SIGKILL) == nil {
		return 1 // at least one: a process group cannot be counted from outside
	}
	return 0
}

func orDefault(w, def io.Writer) io.Writer {
	if w == nil {
		return def
	}
	return w
}

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

// Done is closed when the guard has exited: the child and everything it started are gone.
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

// Leftovers is how many processes the supervisor killed because the guard had died.
func (c *Child) Leftovers() int { return c.leftovers }

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
// SIGKILL — and returns once the guard has exited. A guard that has not finished within
// stopBackstop after the grace period is killed, and what it guarded with it. It reports
// whether anything needed SIGKILL.
func (c *Child) Stop(grace time.Duration) (killed bool) {
	select {
	case <-c.done:
		return c.killedAny()
	default:
	}
	_ = syscall.Kill(c.pid, syscall.SIGTERM)
	t := time.NewTimer(grace + stopBackstop)
	defer t.Stop()
	select {
	case <-c.done:
		return c.killedAny()
	case <-t.C:
	}
	_ = syscall.Kill(c.pid, syscall.SIGKILL)
	<-c.done
	return true
}

func (c *Child) killedAny() bool {
	return c.report.CommandKilled || c.report.Killed > 0 || c.leftovers > 0
}
