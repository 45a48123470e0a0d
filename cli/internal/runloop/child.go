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
	// Leftovers is how many processes the supervisor killed itself: the guard died, or did not
	// kill them by the end of the grace period.
	Leftovers() int
	// SetDeadline hands the guard the term's new deadline without waiting.
	SetDeadline(supervisor.Deadline)
	// Started is closed once the command's own PID is known, or the guard is gone.
	Started() <-chan struct{}
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
// many of the processes it started had to be stopped after it (SIGTERM) or killed (SIGKILL) —
// by the guard, as far as its reports got, and by run itself when the guard did not.
func outcomeAttrs(child Child) []any {
	r := child.Report()
	attrs := []any{"pid", r.PID, "exit_code", child.ExitCode(), "descendants_terminated", r.Terminated, "descendants_killed", r.Killed}
	if r.StoppedBy != "" {
		attrs = append(attrs, "stopped_by", r.StoppedBy)
	}
	if !r.Done {
		// Counted until the guard died: what it did after its last report is not known.
		attrs = append(attrs, "guard_died", true)
	}
	if n := child.Leftovers(); n > 0 {
		attrs = append(attrs, "killed_by_run", n)
	}
	return attrs
}
