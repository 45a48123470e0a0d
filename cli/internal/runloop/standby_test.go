package runloop

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/supervisor"
)

// fakeStandby is an idle guard: Launch hands out its child, or fails with launchErr.
type fakeStandby struct {
	child     *fakeChild
	launchErr error
	exited    chan struct{}

	mu       sync.Mutex
	env      []string // given by Launch
	launched bool
	exitOnce sync.Once
}

func newFakeStandby() *fakeStandby {
	return &fakeStandby{child: newFakeChild(), exited: make(chan struct{})}
}

func (s *fakeStandby) Launch(env []string, _ supervisor.Deadline) (Child, error) {
	if s.launchErr != nil {
		return nil, s.launchErr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.env, s.launched = env, true
	return s.child, nil
}

func (s *fakeStandby) Exited() <-chan struct{} { return s.exited }
func (s *fakeStandby) Close()                  { s.exit() }

// exit is the idle guard dying (or exiting once closed).
func (s *fakeStandby) exit() { s.exitOnce.Do(func() { close(s.exited) }) }

func (s *fakeStandby) wasLaunched() ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.env, s.launched
}

// standbyHarness is a harness whose loop keeps idle guards from prestart; each one made is
// sent on made, and each back-off the spare waits is sent on delays.
type standbyHarness struct {
	*harness
	made   chan *fakeStandby
	delays chan time.Duration
}

// newStandbyHarness builds the loop; next makes each idle guard, fire decides whether the
// back-off timers fire at once (else never).
func newStandbyHarness(next func() *fakeStandby, fire bool) *standbyHarness {
	sh := &standbyHarness{made: make(chan *fakeStandby, 16), delays: make(chan time.Duration, 16)}
	sh.harness = newHarness(func(l *Loop) {
		l.Log = nil
		l.Now = func() time.Time { return time.Unix(0, 0) } // every idle guard dies young
		l.Prestart = func(spec supervisor.Spec) (Standby, error) {
			if !slices.Equal(spec.Env, []string{"PATH=/bin"}) {
				return nil, errors.New("an idle guard must get run's environment only")
			}
			s := next()
			sh.made <- s
			return s, nil
		}
		l.after = func(d time.Duration) <-chan time.Time {
			sh.delays <- d
			if !fire {
				return nil
			}
			ch := make(chan time.Time, 1)
			ch <- time.Time{}
			return ch
		}
	})
	return sh
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s", what)
		var zero T
		return zero
	}
}

// TestLeadLaunchesTheIdleGuard: a term starts the command through the idle guard, with the
// term's environment, and starts no fresh guard; the next idle guard follows the term, and
// Close makes it exit.
func TestLeadLaunchesTheIdleGuard(t *testing.T) {
	sh := newStandbyHarness(newFakeStandby, true)
	sh.loop.Prepare()
	idle := receive(t, sh.made, "idle guard")
	res := sh.lead(context.Background(), sh.term(make(chan struct{})))
	idle.child.exit(0)
	if r := await(t, res); r.err != nil || r.out != (Outcome{ChildExited: true}) {
		t.Fatalf("Lead = %+v, %v", r.out, r.err)
	}
	env, launched := idle.wasLaunched()
	if !launched || !slices.Equal(env, []string{"PATH=/bin", "SWARM_LEASE_FENCE=7"}) {
		t.Fatalf("the idle guard was launched %v with %v", launched, env)
	}
	if len(sh.specs) != 0 || !strings.Contains(sh.logText(), "guard_prestarted=true") {
		t.Fatalf("%d fresh guards started; log:\n%s", len(sh.specs), sh.logText())
	}
	next := receive(t, sh.made, "idle guard for the next term")
	sh.loop.Close()
	select {
	case <-next.exited:
	default:
		t.Fatal("Close left the idle guard running")
	}
}

// TestLeadFallsBackToAFreshGuard: an idle guard that is gone when the term starts — it died
// meanwhile, or died before and its replacement still waits out its back-off — never holds up
// the term: the command starts through a fresh guard.
func TestLeadFallsBackToAFreshGuard(t *testing.T) {
	t.Run("launch fails", func(t *testing.T) {
		sh := newStandbyHarness(func() *fakeStandby {
			s := newFakeStandby()
			s.launchErr = supervisor.ErrStandbyGone
			return s
		}, false)
		sh.loop.Prepare()
		receive(t, sh.made, "idle guard")
		res := sh.lead(context.Background(), sh.term(make(chan struct{})))
		sh.started(t)
		sh.child.exit(0)
		if r := await(t, res); r.err != nil {
			t.Fatal(r.err)
		}
		if len(sh.specs) != 1 || !strings.Contains(sh.logText(), "idle guard gone: starting the child through a fresh one") ||
			!strings.Contains(sh.logText(), "guard_prestarted=false") {
			t.Fatalf("%d fresh guards; log:\n%s", len(sh.specs), sh.logText())
		}
		sh.loop.Close()
	})
	t.Run("replacement waiting", func(t *testing.T) {
		sh := newStandbyHarness(newFakeStandby, false) // back-offs never end
		sh.loop.Prepare()
		receive(t, sh.made, "idle guard").exit()
		receive(t, sh.delays, "back-off")
		res := sh.lead(context.Background(), sh.term(make(chan struct{})))
		sh.started(t)
		sh.child.exit(0)
		if r := await(t, res); r.err != nil || len(sh.specs) != 1 {
			t.Fatalf("Lead: %v, %d fresh guards", r.err, len(sh.specs))
		}
		sh.loop.Close()
	})
}

// TestIdleGuardReplacedWithBackoff: an idle guard that keeps dying is replaced at once the
// first time, then after a doubling back-off.
func TestIdleGuardReplacedWithBackoff(t *testing.T) {
	sh := newStandbyHarness(newFakeStandby, true)
	defer sh.loop.Close()
	sh.loop.Prepare()
	for i, want := range []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
		receive(t, sh.made, "idle guard").exit()
		if got := receive(t, sh.delays, "back-off"); got != want {
			t.Fatalf("replacement %d after %v, want %v", i+1, got, want)
		}
	}
	receive(t, sh.made, "the last replacement")
}
