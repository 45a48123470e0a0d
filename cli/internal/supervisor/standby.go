//go:build unix

package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// ErrStandbyGone: the idle guard exited before it was given a term (killed, crashed, or
// closed); start a fresh guard instead.
var ErrStandbyGone = errors.New("supervisor: the idle guard is gone")

// Standby is a guard started ahead of a term: its process has been exec'd and runs, but waits
// on a pipe with no command started. Launch gives it the term, and it starts the command at
// once — the fork and exec of the guard itself, the slowest part of starting a command, is
// then off the path from winning a term to the command running.
//
// Nothing of the term reaches the idle guard before Launch: its arguments are those of Start
// and its environment is Spec.Env, the one run inherited, without the term's variables. The
// term's environment travels over the pipe and is given to the command only.
type Standby struct {
	child *Child
	// term is the write end of the guard's term pipe; nil once launched or closed.
	mu   sync.Mutex
	term *os.File
}

// termMessage is what Launch writes on the term pipe: the command's whole environment.
type termMessage struct {
	Env []string `json:"env"`
}

// Prestart starts an idle guard for spec.Argv. spec.Env is the guard's own environment; the
// command's comes with Launch. The idle guard exits when Close closes its pipe, when it gets
// SIGTERM, and when the supervisor dies (the parent-death signal, as for Start).
func Prestart(spec Spec) (*Standby, error) {
	c, termW, err := startGuard(spec, true)
	if err != nil {
		return nil, err
	}
	return &Standby{child: c, term: termW}, nil
}

// Launch hands the term to the idle guard, which starts the command with env as its whole
// environment, and returns the running child as Start does. It fails with ErrStandbyGone when
// the guard has exited, or was launched or closed before: the caller starts a fresh guard.
func (s *Standby) Launch(env []string) (*Child, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.term == nil {
		return nil, ErrStandbyGone
	}
	select {
	case <-s.child.done:
		s.closeLocked()
		return nil, ErrStandbyGone
	default:
	}
	msg, err := json.Marshal(termMessage{Env: env})
	if err != nil {
		return nil, fmt.Errorf("supervisor: encode the term: %w", err)
	}
	// One write of the whole message, then EOF: the guard reads until EOF, so a short
	// environment is never taken for the whole one.
	_, err = s.term.Write(msg)
	s.closeLocked()
	if err != nil { // EPIPE: the guard died since the check above
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
	launched := s.term == nil
	s.closeLocked()
	s.mu.Unlock()
	if launched {
		return
	}
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

func (s *Standby) closeLocked() {
	if s.term != nil {
		s.term.Close()
		s.term = nil
	}
}
