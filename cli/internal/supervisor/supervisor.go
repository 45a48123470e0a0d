//go:build unix

// Package supervisor runs the leader's child process: in a process group of its own, behind a
// small guard process that makes sure the whole group dies with the supervisor.
//
// The process tree is: supervisor → guard (a hidden mode of the same binary, leader of a new
// process group) → CMD and everything CMD starts. On Linux the guard is a child subreaper and
// receives SIGTERM when the supervisor dies (parent-death signal); it then stops the group
// exactly as a normal stop would: SIGTERM, the grace period, SIGKILL. Without the guard a
// SIGKILLed supervisor would leave its child — and its child's children — running as a second
// leader.
package supervisor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// GuardCommand is the hidden command of the binary that runs the guard.
const GuardCommand = "child-guard"

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
	// Self is the path of this binary, which runs the guard (default os.Executable()).
	Self string
}

// Child is a running child process group.
type Child struct {
	guard *exec.Cmd
	pgid  int
	done  chan struct{}
	state *os.ProcessState
	err   error
}

// Start starts the guard and, through it, the child.
func Start(spec Spec) (*Child, error) {
	if len(spec.Argv) == 0 {
		return nil, errors.New("supervisor: no command to run")
	}
	self := spec.Self
	if self == "" {
		var err error
		if self, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("supervisor: find own executable: %w", err)
		}
	}
	args := append([]string{GuardCommand, "--grace-ms", strconv.FormatInt(spec.Grace.Milliseconds(), 10),
		"--parent", strconv.Itoa(os.Getpid()), "--"}, spec.Argv...)
	cmd := exec.Command(self, args...)
	cmd.Env = spec.Env
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = orDefault(spec.Stdout, os.Stdout), orDefault(spec.Stderr, os.Stderr)
	cmd.SysProcAttr = guardAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("supervisor: start %q: %w", spec.Argv[0], err)
	}
	c := &Child{guard: cmd, pgid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		c.state = cmd.ProcessState
		close(c.done)
	}()
	return c, nil
}

func orDefault(w, def io.Writer) io.Writer {
	if w == nil {
		return def
	}
	return w
}

// PID returns the guard's process ID, which is also the process group ID.
func (c *Child) PID() int { return c.pgid }

// Done is closed when the guard has exited: the child and its group are gone.
func (c *Child) Done() <-chan struct{} { return c.done }

// ExitCode is the child's exit code once Done is closed: its own code, or 128 + the signal
// that killed it.
func (c *Child) ExitCode() int { return ExitCode(c.state) }

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

// Stop sends SIGTERM to the child's process group, waits up to grace for it to end, then sends
// SIGKILL to what remains, and returns once the guard has exited. It reports whether the grace
// period ran out.
func (c *Child) Stop(grace time.Duration) (killed bool) {
	select {
	case <-c.done:
		return false
	default:
	}
	_ = syscall.Kill(-c.pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.done:
		return false
	case <-t.C:
	}
	_ = syscall.Kill(-c.pgid, syscall.SIGKILL)
	<-c.done
	return true
}
