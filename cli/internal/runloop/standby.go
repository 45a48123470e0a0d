package runloop

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/supervisor"
)

// Standby is a guard started ahead of a term, idle until Launch: *supervisor.Standby, or a
// fake in tests.
type Standby interface {
	// Launch gives the guard the command's environment and the term's deadline; it starts
	// the command at once.
	Launch(env []string, deadline supervisor.Deadline) (Child, error)
	// Exited is closed when the guard has exited.
	Exited() <-chan struct{}
	// Close makes an idle guard exit.
	Close()
}

// PrestartFunc starts an idle guard as supervisor.Prestart does.
type PrestartFunc func(supervisor.Spec) (Standby, error)

// prestartSupervised is the real PrestartFunc.
func prestartSupervised(spec supervisor.Spec) (Standby, error) {
	s, err := supervisor.Prestart(spec)
	if err != nil {
		return nil, err
	}
	return supervisedStandby{s}, nil
}

// supervisedStandby adapts *supervisor.Standby to Standby.
type supervisedStandby struct{ *supervisor.Standby }

// Launch returns the child as a Child.
func (s supervisedStandby) Launch(env []string, deadline supervisor.Deadline) (Child, error) {
	c, err := s.Standby.Launch(env, deadline)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Back-off of an idle guard that keeps exiting before its term: the first one is replaced at
// once, the next ones after a doubling wait, so that a guard that cannot run does not become
// a fork loop.
const (
	standbyBackoffMin = 100 * time.Millisecond
	standbyBackoffMax = 10 * time.Second
	// standbyHealthy is how long an idle guard must have lived for its exit not to count as a
	// crash in a row.
	standbyHealthy = 10 * time.Second
)

// spare keeps one idle guard ready while run follows, and replaces it when it exits without a
// term. A term takes the idle guard if there is one; otherwise it starts a fresh guard, as
// without a spare: the spare never delays a term.
type spare struct {
	prestart PrestartFunc
	spec     supervisor.Spec
	log      *slog.Logger
	now      func() time.Time
	after    func(time.Duration) <-chan time.Time

	mu      sync.Mutex
	idle    Standby
	pending bool // a replacement waits out its back-off
	closed  chan struct{}
	backoff CrashBackoff
}

// fill starts an idle guard unless one is ready or on its way.
func (s *spare) fill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle == nil && !s.pending && !s.isClosed() {
		s.startLocked()
	}
}

func (s *spare) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

func (s *spare) startLocked() {
	began := s.now()
	sb, err := s.prestart(s.spec)
	if err != nil {
		s.replaceLocked(0, err)
		return
	}
	s.idle = sb
	go s.watch(sb, began)
}

// watch replaces sb if it exits while still idle: not taken by a term, not closed.
func (s *spare) watch(sb Standby, began time.Time) {
	<-sb.Exited()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle != sb || s.isClosed() {
		return
	}
	s.idle = nil
	s.replaceLocked(s.now().Sub(began), errors.New("it exited while idle"))
}

// replaceLocked starts another idle guard after the back-off for one that lived ran.
func (s *spare) replaceLocked(ran time.Duration, why error) {
	d := s.backoff.Next(ran, 1)
	s.log.Warn("idle guard gone: starting another", "err", why, "backoff", d, "gone_in_a_row", s.backoff.Crashes())
	s.pending = true
	wait := s.after(d)
	go func() {
		select {
		case <-wait:
		case <-s.closed:
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.pending = false
		if s.idle == nil && !s.isClosed() {
			s.startLocked()
		}
	}()
}

// take hands the idle guard to a term, or nil when none is ready.
func (s *spare) take() Standby {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.idle
	if sb == nil {
		return nil
	}
	select {
	case <-sb.Exited(): // watch replaces it
		return nil
	default:
	}
	s.idle = nil
	return sb
}

// close stops keeping a spare and makes the idle guard exit.
func (s *spare) close() {
	s.mu.Lock()
	if s.isClosed() {
		s.mu.Unlock()
		return
	}
	close(s.closed)
	sb := s.idle
	s.idle = nil
	s.mu.Unlock()
	if sb != nil {
		sb.Close()
	}
}
