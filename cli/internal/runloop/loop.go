package runloop

import (
	"context"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/supervisor"
)

// commandPIDWait bounds how long "child started" waits for the command's own PID: the guard
// reports it as soon as it has started the command, well within this.
const commandPIDWait = time.Second

// Loop supervises the command across terms. Its zero value is not usable: Argv is required.
type Loop struct {
	// Argv is the command and its arguments.
	Argv []string
	// Environ is the environment the command inherits, before the term's own variables.
	Environ []string
	// Grace is the time between SIGTERM and SIGKILL when a term ends.
	Grace time.Duration
	// NoCgroup keeps the command out of a cgroup of its own.
	NoCgroup bool
	// Once exits after the first term; ExitOnChildExit exits when the command exits by itself.
	Once, ExitOnChildExit bool
	// Start starts the command (default: supervisor.Start); tests pass a fake.
	Start StartFunc
	// Now is the clock for the "ran" durations in the log (default time.Now).
	Now func() time.Time
	// Backoff spaces out the restarts of a command that keeps crashing.
	Backoff CrashBackoff
}

// Lead runs the command for the term t and returns once the term is over for the command:
// the term ended (the command was stopped first) or the command exited by itself. ctx is run's
// own context: a term ended by shutdown does not count as lost for Once. The error is the
// command's failure to start (a *supervisor.StartError, exit 126 or 127) or the guard's; the
// caller ends the term either way.
func (l *Loop) Lead(ctx context.Context, t Term) (Outcome, error) {
	start, now := l.Start, l.Now
	if start == nil {
		start = startSupervised
	}
	if now == nil {
		now = time.Now
	}
	lost := func() Outcome {
		if l.Once && ctx.Err() == nil {
			return Outcome{Exit: true, ExitCode: ExitLost}
		}
		return Outcome{}
	}
	ended := func() []any {
		if t.Ended == nil {
			return nil
		}
		return t.Ended()
	}
	select {
	case <-t.Done: // winning took longer than the term can last
		t.Log.Warn("term ended before the child started", ended()...)
		return lost(), nil
	default:
	}
	child, err := start(supervisor.Spec{
		Argv:     l.Argv,
		Env:      append(append([]string(nil), l.Environ...), t.Env...),
		Grace:    l.Grace,
		NoCgroup: l.NoCgroup,
	})
	if err != nil {
		return Outcome{}, err
	}
	started := now()
	t.Log.Info("child started", "pid", child.CommandPID(commandPIDWait), "guard_pid", child.PID(), "command", l.Argv[0])
	ran := func() time.Duration { return now().Sub(started).Round(time.Millisecond) }
	select {
	case <-t.Done:
		killed := child.Stop(l.Grace)
		attrs := append(outcomeAttrs(child), "killed_after_grace", killed, "ran", ran())
		t.Log.Info("child stopped", append(attrs, ended()...)...)
		return lost(), nil
	case <-child.Done():
		if err := child.StartError(); err != nil {
			// Removed or changed since run checked it: the same configuration error.
			t.Log.Error("child could not start", "err", err)
			return Outcome{}, err
		}
		code := child.ExitCode()
		t.Log.Info("child exited", append(outcomeAttrs(child), "ran", ran())...)
		if l.Once || l.ExitOnChildExit {
			return Outcome{Exit: true, ExitCode: code, ChildExited: true}, nil
		}
		delay := l.Backoff.Next(now().Sub(started), code)
		if delay > 0 {
			t.Log.Warn("child keeps crashing: restarting after a back-off, the lease released meanwhile", "exit_code", code,
				"crashes_in_a_row", l.Backoff.Crashes(), "backoff", delay)
		}
		return Outcome{ChildExited: true, Backoff: delay}, nil
	}
}
