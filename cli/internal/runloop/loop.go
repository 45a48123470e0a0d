package runloop

import (
	"cmp"
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/supervisor"
)

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
	// Hold is the incarnation's lock, inherited by every guard and command (supervisor.Spec).
	Hold *os.File
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
		s.log = cmp.Or(s.log, slog.Default())
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
	return supervisor.Spec{Argv: l.Argv, Env: env, Grace: l.Grace, NoCgroup: l.NoCgroup, Hold: l.Hold}
}

// startChild starts the command through the idle guard when one is ready, else through a
// fresh guard. prestarted tells which.
func (l *Loop) startChild(spec supervisor.Spec, start StartFunc, log *slog.Logger) (child Child, prestarted bool, err error) {
	if s := l.spares(); s != nil {
		if sb := s.take(); sb != nil {
			child, err := sb.Launch(spec.Env, spec.Deadline)
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
//
// Nothing between the term's end and the command's stop waits on anything else: the log
// writes nothing synchronously (run's stderr is a bounded queue), and the guard has the term's
// deadline besides, so that the command stops by it even if this loop does not run.
func (l *Loop) Lead(ctx context.Context, t CommandTerm) (out Outcome, err error) {
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
	spec := l.spec(append(append([]string(nil), l.Environ...), t.Env...))
	spec.Deadline = t.deadline()
	child, prestarted, err := l.startChild(spec, start, t.Log)
	if err != nil {
		return Outcome{}, err
	}
	defer func() {
		// Ready for the next term — off the path of this one's release, which follows at once.
		if s := l.spares(); s != nil && err == nil && !out.Exit && ctx.Err() == nil {
			go s.fill()
		}
	}()
	go forwardDeadlines(t, child)
	started := now()
	ran := func() time.Duration { return now().Sub(started).Round(time.Millisecond) }
	// "child started" waits for the command's PID, which the guard reports at once; the loop
	// does not wait for it.
	pidKnown := child.Started()
	logStarted := func() {
		if pidKnown == nil {
			return
		}
		pidKnown = nil
		if pid := child.CommandPID(0); pid > 0 {
			t.Log.Info("child started", "pid", pid, "guard_pid", child.PID(), "command", l.Argv[0], "guard_prestarted", prestarted)
		}
	}
	for {
		select {
		case <-pidKnown:
			logStarted()
		case <-t.Done:
			killed := child.Stop(l.Grace)
			logStarted()
			attrs := append(outcomeAttrs(child), "killed_after_grace", killed, "ran", ran())
			t.Log.Info("child stopped", append(attrs, ended()...)...)
			return lost(), nil
		case <-child.Done():
			logStarted()
			if err := child.StartError(); err != nil {
				// Removed or changed since run checked it: the same configuration error.
				t.Log.Error("child could not start", "err", err)
				return Outcome{}, err
			}
			if child.Report().StoppedBy == supervisor.StopDeadline {
				// The guard's own clock reached the deadline before this loop ended the term
				// (run was stopped, or is late): the term is over for the command all the same.
				attrs := append(outcomeAttrs(child), "ran", ran())
				t.Log.Warn("child stopped by its guard at the term's deadline", attrs...)
				return lost(), nil
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
}

// forwardDeadlines hands the guard the term's deadline after every renewal, until the term or
// the command ends.
func forwardDeadlines(t CommandTerm, child Child) {
	if t.Renewed == nil || t.Remaining == nil {
		return
	}
	for {
		select {
		case <-t.Renewed:
			child.SetDeadline(t.deadline())
		case <-t.Done:
			return
		case <-child.Done():
			return
		}
	}
}
