package runloop

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/supervisor"
)

// fakeChild is a command that exits when the test says, or when stopped.
type fakeChild struct {
	done       chan struct{}
	exitCode   int
	startErr   error
	stoppedFor time.Duration // the grace Stop was given; 0 if never stopped
	stoppedBy  string        // the guard's reason in the report
	deadlines  chan supervisor.Deadline
}

func newFakeChild() *fakeChild {
	return &fakeChild{done: make(chan struct{}), deadlines: make(chan supervisor.Deadline, 16)}
}

// started is always closed: the fake's PID is known at once.
var started = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c *fakeChild) PID() int                     { return 4242 }
func (c *fakeChild) CommandPID(time.Duration) int { return 4243 }
func (c *fakeChild) Done() <-chan struct{}        { return c.done }
func (c *fakeChild) StartError() error            { return c.startErr }
func (c *fakeChild) ExitCode() int                { return c.exitCode }
func (c *fakeChild) Leftovers() int               { return 0 }
func (c *fakeChild) Started() <-chan struct{}     { return started }
func (c *fakeChild) SetDeadline(d supervisor.Deadline) {
	c.deadlines <- d
}
func (c *fakeChild) Report() supervisor.Report {
	return supervisor.Report{PID: 4243, Done: true, ExitCode: c.exitCode, StoppedBy: c.stoppedBy}
}
func (c *fakeChild) Stop(grace time.Duration) bool {
	c.stoppedFor = grace
	c.exitCode = 143
	close(c.done)
	return false
}

// exit makes the command exit by itself with code.
func (c *fakeChild) exit(code int) {
	c.exitCode = code
	close(c.done)
}

// harness is one Loop with a fake starter and a log in a buffer.
type harness struct {
	loop   *Loop
	child  *fakeChild
	specs  []supervisor.Spec
	logBuf bytes.Buffer  // read only once Lead has returned
	begun  chan struct{} // closed when the loop has started the command
}

func newHarness(mod func(*Loop)) *harness {
	h := &harness{child: newFakeChild(), begun: make(chan struct{})}
	h.loop = &Loop{Argv: []string{"./job", "--x"}, Environ: []string{"PATH=/bin"}, Grace: 3 * time.Second,
		Start: func(spec supervisor.Spec) (Child, error) {
			h.specs = append(h.specs, spec)
			close(h.begun)
			return h.child, nil
		}}
	if mod != nil {
		mod(h.loop)
	}
	return h
}

func (h *harness) term(done chan struct{}) CommandTerm {
	return CommandTerm{Done: done, Env: []string{"SWARM_LEASE_FENCE=7"}, Log: slog.New(slog.NewTextHandler(&h.logBuf, nil)),
		Ended: func() []any { return []any{"reason", "deadline"} }}
}

// lead runs Lead in the background; the test acts on the child or the term meanwhile.
func (h *harness) lead(ctx context.Context, t CommandTerm) <-chan result {
	ch := make(chan result, 1)
	go func() {
		out, err := h.loop.Lead(ctx, t)
		ch <- result{out, err}
	}()
	return ch
}

type result struct {
	out Outcome
	err error
}

func await(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("Lead did not return")
		return result{}
	}
}

// started waits until the loop has started the command.
func (h *harness) started(t *testing.T) {
	t.Helper()
	select {
	case <-h.begun:
	case <-time.After(5 * time.Second):
		t.Fatal("the command was not started")
	}
}

func (h *harness) logText() string { return h.logBuf.String() }

// TestLeadStopsTheChildWhenTheTermEnds: the end of the term stops the command with the grace
// period and logs why; run contends again, except with --once, where a lost term exits 10 — but
// not when run itself is shutting down.
func TestLeadStopsTheChildWhenTheTermEnds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		once     bool
		shutdown bool
		want     Outcome
	}{
		{"contend again", false, false, Outcome{}},
		{"once: lost", true, false, Outcome{Exit: true, ExitCode: ExitLost}},
		{"once: shutdown", true, true, Outcome{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(func(l *Loop) { l.Once = tc.once })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan struct{})
			res := h.lead(ctx, h.term(done))
			h.started(t)
			if tc.shutdown {
				cancel()
			}
			close(done)
			r := await(t, res)
			if r.err != nil || r.out != tc.want {
				t.Fatalf("Lead = %+v, %v; want %+v", r.out, r.err, tc.want)
			}
			if h.child.stoppedFor != 3*time.Second {
				t.Fatalf("the command was stopped with grace %v, want 3s", h.child.stoppedFor)
			}
			for _, want := range []string{`msg="child started" pid=4243 guard_pid=4242`, "child stopped", "reason=deadline", "pid=4243"} {
				if !strings.Contains(h.logText(), want) {
					t.Errorf("log lacks %q:\n%s", want, h.logText())
				}
			}
		})
	}
}

// TestLeadChildExit: a command that exits by itself ends the term for it; run contends again,
// or exits with the command's own code with --once or --exit-on-child-exit.
func TestLeadChildExit(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Loop)
		want Outcome
	}{
		{"contend again", nil, Outcome{ChildExited: true}},
		{"once", func(l *Loop) { l.Once = true }, Outcome{Exit: true, ExitCode: 7, ChildExited: true}},
		{"exit on child exit", func(l *Loop) { l.ExitOnChildExit = true }, Outcome{Exit: true, ExitCode: 7, ChildExited: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(tc.mod)
			res := h.lead(context.Background(), h.term(make(chan struct{})))
			h.started(t)
			h.child.exit(7)
			r := await(t, res)
			if r.err != nil || r.out != tc.want {
				t.Fatalf("Lead = %+v, %v; want %+v", r.out, r.err, tc.want)
			}
			if h.child.stoppedFor != 0 {
				t.Fatal("a command that exited was stopped")
			}
			if !strings.Contains(h.logText(), "child exited") || !strings.Contains(h.logText(), "exit_code=7") {
				t.Fatalf("log:\n%s", h.logText())
			}
		})
	}
}

// TestLeadEnvironment: the command gets the loop's environment plus the term's variables, and
// the configured grace and cgroup choice.
func TestLeadEnvironment(t *testing.T) {
	h := newHarness(func(l *Loop) { l.NoCgroup = true })
	res := h.lead(context.Background(), h.term(make(chan struct{})))
	h.started(t)
	h.child.exit(0)
	await(t, res)
	if len(h.specs) != 1 {
		t.Fatalf("%d starts", len(h.specs))
	}
	s := h.specs[0]
	if !slices.Equal(s.Env, []string{"PATH=/bin", "SWARM_LEASE_FENCE=7"}) || !slices.Equal(s.Argv, []string{"./job", "--x"}) || s.Grace != 3*time.Second || !s.NoCgroup {
		t.Fatalf("spec %+v", s)
	}
}

// TestLeadStartFailures: a command that could not start is returned as its *StartError (run
// exits 126/127), as is a guard that could not start; a term already over starts nothing.
func TestLeadStartFailures(t *testing.T) {
	h := newHarness(nil)
	h.child.startErr = &supervisor.StartError{Command: "./job", Code: supervisor.ExitNotFound, Err: errors.New("no such file")}
	res := h.lead(context.Background(), h.term(make(chan struct{})))
	h.started(t)
	h.child.exit(supervisor.ExitNotFound)
	r := await(t, res)
	var se *supervisor.StartError
	if !errors.As(r.err, &se) || se.Code != supervisor.ExitNotFound || r.out.Exit {
		t.Fatalf("Lead = %+v, %v; want the *StartError", r.out, r.err)
	}

	guardErr := errors.New("supervisor: start: fork failed")
	h = newHarness(func(l *Loop) {
		l.Start = func(supervisor.Spec) (Child, error) { return nil, guardErr }
	})
	if _, err := h.loop.Lead(context.Background(), h.term(make(chan struct{}))); !errors.Is(err, guardErr) {
		t.Fatalf("Lead with a failing guard: %v", err)
	}

	h = newHarness(func(l *Loop) { l.Once = true })
	done := make(chan struct{})
	close(done)
	out, err := h.loop.Lead(context.Background(), h.term(done))
	if err != nil || out != (Outcome{Exit: true, ExitCode: ExitLost}) || len(h.specs) != 0 {
		t.Fatalf("a term over before the start: %+v, %v, %d starts", out, err, len(h.specs))
	}
	if !strings.Contains(h.logText(), "term ended before the child started") {
		t.Fatalf("log:\n%s", h.logText())
	}
}

// TestLeadBacksOffACrashingChild: a command that keeps exiting non-zero soon after it started
// gets a back-off the caller waits with the term released, logged as a crash.
func TestLeadBacksOffACrashingChild(t *testing.T) {
	h := newHarness(func(l *Loop) { l.Backoff = CrashBackoff{Min: 5 * time.Millisecond, HealthyRun: time.Hour} })
	for i, want := range []time.Duration{0, 5 * time.Millisecond, 10 * time.Millisecond} {
		h.child, h.begun = newFakeChild(), make(chan struct{})
		res := h.lead(context.Background(), h.term(make(chan struct{})))
		h.started(t)
		h.child.exit(1)
		r := await(t, res)
		if r.err != nil || r.out != (Outcome{ChildExited: true, Backoff: want}) {
			t.Fatalf("crash %d: %+v, %v; want back-off %v", i+1, r.out, r.err, want)
		}
	}
	if n := strings.Count(h.logText(), "child keeps crashing"); n != 2 || !strings.Contains(h.logText(), "crashes_in_a_row=3") {
		t.Fatalf("%d crash lines:\n%s", n, h.logText())
	}
}

// TestLeadHandsTheGuardEveryDeadline: the command is started with the term's deadline, and each
// renewal hands the guard the new one.
func TestLeadHandsTheGuardEveryDeadline(t *testing.T) {
	h := newHarness(nil)
	remaining := 10 * time.Second
	var mu sync.Mutex
	renewed := make(chan struct{}, 1)
	term := h.term(make(chan struct{}))
	term.Remaining = func() time.Duration { mu.Lock(); defer mu.Unlock(); return remaining }
	term.Renewed = renewed
	res := h.lead(context.Background(), term)
	h.started(t)
	if until := h.specs[0].Deadline.Until(); until < 9*time.Second || until > 10*time.Second {
		t.Fatalf("the command was started with a deadline %v away, want the term's 10 s", until)
	}
	mu.Lock()
	remaining = 20 * time.Second
	mu.Unlock()
	renewed <- struct{}{}
	select {
	case d := <-h.child.deadlines:
		if until := d.Until(); until < 19*time.Second || until > 20*time.Second {
			t.Fatalf("the guard was handed a deadline %v away, want the renewal's 20 s", until)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the renewal's deadline never reached the guard")
	}
	h.child.exit(0)
	await(t, res)
}

// TestLeadCommandStoppedByItsGuard: a command the guard stopped at the term's deadline (run was
// late or stopped) ends the term for the command — lost, as a step-down — not an exit of the
// command's own.
func TestLeadCommandStoppedByItsGuard(t *testing.T) {
	h := newHarness(func(l *Loop) { l.Once = true })
	res := h.lead(context.Background(), h.term(make(chan struct{})))
	h.started(t)
	h.child.stoppedBy = supervisor.StopDeadline
	h.child.exit(143)
	r := await(t, res)
	if r.err != nil || r.out != (Outcome{Exit: true, ExitCode: ExitLost}) {
		t.Fatalf("Lead = %+v, %v; want the term lost (exit %d with --once)", r.out, r.err, ExitLost)
	}
	if !strings.Contains(h.logText(), "child stopped by its guard at the term's deadline") || strings.Contains(h.logText(), "child exited") {
		t.Fatalf("log:\n%s", h.logText())
	}
}
