package runloop

import (
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/supervisor"
)

// Child is the running command as the loop uses it: *supervisor.Child, or a fake in tests.
type Child interface {
	// PID is the guard's process ID.
	PID() int
	// CommandPID is the command's own process ID, waiting up to timeout for it; 0 if unknown.
	CommandPID(timeout time.Duration) int
	// Done is closed when the command and all it started are gone.
	Done() <-chan struct{}
	// Stop stops the command and all it started within grace, and reports whether anything
	// needed SIGKILL.
	Stop(grace time.Duration) (killed bool)
	// StartError is why the command could not start (a *supervisor.StartError), once Done.
	StartError() error
	// ExitCode is the command's own exit code, once Done.
	ExitCode() int
	// Report is the guard's final report, once Done.
	Report() supervisor.Report
	// Leftovers is how many processes the supervisor killed itself because the guard died.
	Leftovers() int
}

// StartFunc starts a command as supervisor.Start does.
type StartFunc func(supervisor.Spec) (Child, error)

// startSupervised is the real StartFunc.
func startSupervised(spec supervisor.Spec) (Child, error) {
	c, err := supervisor.Start(spec)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// outcomeAttrs is what the log says of a finished command: its own pid and exit code, and how
// many of the processes it started had to be stopped after it (SIGTERM) or killed (SIGKILL).
func outcomeAttrs(child Child) []any {
	r := child.Report()
	attrs := []any{"pid", r.PID, "exit_code", child.ExitCode(), "descendants_terminated", r.Terminated, "descendants_killed", r.Killed}
	if n := child.Leftovers(); n > 0 {
		attrs = append(attrs, "killed_after_guard_died", n)
	}
	return attrs
}
