package runloop

import (
	"context"
	"log/slog"
	"sync"
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
	// Prestart starts the idle guard that Prepare keeps ready (default: supervisor.Prestart,
	// unless Start is a fake; then none).
	Prestart PrestartFunc
	// Log receives what concerns no term: the idle guard's replacements (default
	// slog.Default()).
	Log *slog.Logger
	// Now is the clock for the "ran" durations in the log (default time.Now).
	Now func() time.Time
	// Backoff spaces out the restarts of a command that keeps crashing.
	Backoff CrashBackoff

	spareOnce sync.Once
	spare     *spare // nil: no idle guard is kept
	// after is the spare's timer (default time.After); tests pass their own.
	after func(time.Duration) <-chan time.Time
}

// Prepare starts keeping an idle guard ready for the next term (supervisor.Standby), so that
// winning a term starts the command without first starting the guard. Lead takes it, and
// starts the next one when the term is over. Close ends it.
func (l *Loop) Prepare() {
	if s := l.spares(); s != nil {
		s.fill()
	}
}

// Close makes the idle guard exit, and keeps none from now on.
func (l *Loop) Close() {
	if s := l.spares(); s != nil {
		s.close()
	}
}

// spares is the loop's spare, created on first use; nil when there is no way to prestart.
func (l *Loop) spares() *spare {
	l.spareOnce.Do(func() {
		prestart := l.Prestart
		if prestart == nil && l.Start == nil {
			prestart = prestartSupervised
		}
		if prestart == nil {
			return
		}
		s := &spare{prestart: prestart, spec: l.spec(l.Environ), log: l.Log, now: l.Now, after: l.after, closed: make(chan struct{}),
			backoff: CrashBackoff{Min: standbyBackoffMin, Max: standbyBackoffMax, HealthyRun: standbyHealthy}}
		if s.log == nil {
			s.log = slog.Default()
		}
		if s.now == nil {
			s.now = time.Now
		}
		if s.after == nil {
			s.after = time.After
		}
		l.spare = s
	})
	return l.spare
}

// spec is the command's Spec with env as its environment.
func (l *Loop) spec(env []string) supervisor.Spec {
	return supervisor.Spec{Argv: l.Argv, Env: env, Grace: l.Grace, NoCgroup: l.NoCgroup}
}

// startChild starts the command through the idle guard when one is ready, else through a
// fresh guard. prestarted tells which.
func (l *Loop) startChild(spec supervisor.Spec, start StartFunc, log *slog.Logger) (child Child, prestarted bool, err error) {
	if s := l.spares(); s != nil {
		if sb := s.take(); sb != nil {
			child, err := sb.Launch(spec.Env)
			if err == nil {
				return child, true, nil
			}
			log.Warn("idle guard gone: starting the child through a fresh one", "err", err)
		}
	}
	child, err = start(spec)
	return child, false, err
}

// Lead runs the command for the term t and returns once the term is over for the command:
// the term ended (the command was stopped first) or the command exited by itself. ctx is run's
// own context: a term ended by shutdown does not count as lost for Once. The error is the
// command's failure to start (a *supervisor.StartError, exit 126 or 127) or the guard's; the
// caller ends the term either way.
func (l *Loop) Lead(ctx context.Context, t Term) (out Outcome, err error) {
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
	child, prestarted, err := l.startChild(l.spec(append(append([]string(nil), l.Environ...), t.Env...)), start, t.Log)
	if err != nil {
		return Outcome{}, err
	}
	defer func() {
		// Ready for the next term — off the path of this one's release, which follows at once.
		if s := l.spares(); s != nil && err == nil && !out.Exit && ctx.Err() == nil {
			go s.fill()
		}
	}()
	started := now()
	t.Log.Info("child started", "pid", child.CommandPID(commandPIDWait), "guard_pid", child.PID(), "command", l.Argv[0],
		"guard_prestarted", prestarted)
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
