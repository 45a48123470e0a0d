//go:build unix

package supervisor

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"
)

// ErrStandbyGone: the idle guard exited before it was given a term (killed, crashed, or
// closed); start a fresh guard instead.
var ErrStandbyGone = errors.New("supervisor: the idle guard is gone")

// Standby is a guard started ahead of a term: its process has been exec'd and runs, but waits
// on its control pipe with no command started. Launch gives it the term, and it starts the
// command at once — the fork and exec of the guard itself, the slowest part of starting a
// command, is then off the path from winning a term to the command running.
//
// Nothing of the term reaches the idle guard before Launch: its arguments are those of Start
// and its environment is Spec.Env, the one run inherited, without the term's variables. The
// term's environment travels over the pipe and is given to the command only.
type Standby struct {
	child *Child
	// launched: the term was sent, or the standby closed; the pipe then belongs to the child.
	mu       sync.Mutex
	launched bool
}

// Prestart starts an idle guard for spec.Argv. spec.Env is the guard's own environment; the
// command's comes with Launch. The idle guard exits when Close closes its pipe, when it gets
// SIGTERM, and when the supervisor dies (the parent-death signal, as for Start).
func Prestart(spec Spec) (*Standby, error) {
	c, err := startGuard(spec)
	if err != nil {
		return nil, err
	}
	return &Standby{child: c}, nil
}

// Launch hands the term to the idle guard — the command's whole environment, and the term's
// deadline (zero: none), which the guard enforces on its own — and returns the running child as
// Start does. The guard starts the command at once, unless the deadline is less than the grace
// period away. It fails with ErrStandbyGone when the guard has exited, or was launched or
// closed before: the caller starts a fresh guard.
func (s *Standby) Launch(env []string, deadline Deadline) (*Child, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.launched {
		return nil, ErrStandbyGone
	}
	s.launched = true
	select {
	case <-s.child.done:
		s.child.control.close()
		return nil, ErrStandbyGone
	default:
	}
	if err := s.child.control.writeTerm(env, deadline); err != nil {
		// EPIPE: the guard died since the check above; a timeout: it does not read (stopped).
		// Either way it gets no term: the pipe's end makes a live one exit.
		s.child.control.close()
		return nil, fmt.Errorf("%w: %v", ErrStandbyGone, err)
	}
	return s.child, nil
}

// Exited is closed when the guard has exited, idle or not.
func (s *Standby) Exited() <-chan struct{} { return s.child.done }

// PID is the idle guard's process ID.
func (s *Standby) PID() int { return s.child.pid }

// Close makes an idle guard exit (its pipe ends without a term) and waits until it has; after
// Launch it does nothing.
func (s *Standby) Close() {
	s.mu.Lock()
	launched := s.launched
	s.launched = true
	s.mu.Unlock()
	if launched {
		return
	}
	s.child.control.close()
	// It has nothing to stop: it exits as soon as it reads the end of the pipe.
	t := time.NewTimer(stopBackstop)
	defer t.Stop()
	select {
	case <-s.child.done:
	case <-t.C:
		_ = syscall.Kill(s.child.pid, syscall.SIGKILL)
		<-s.child.done
	}
}
