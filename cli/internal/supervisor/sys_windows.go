package supervisor

import (
	"errors"
	"os"
	"time"
)

// GuardCommand is the hidden command of the binary that runs the guard.
const GuardCommand = "child-guard"

// ErrUnsupported: the supervisor needs process groups and signals (Linux or macOS).
var ErrUnsupported = errors.New("supervisor: run needs Linux or macOS")

// Spec describes a child to start.
type Spec struct {
	Argv     []string
	Env      []string
	Grace    time.Duration
	NoCgroup bool
	Hold     *os.File
	Deadline Deadline
}

// Child is a running child process group.
type Child struct{}

// Start fails on Windows.
func Start(Spec) (*Child, error) { return nil, ErrUnsupported }

// Done is never closed.
func (c *Child) Done() <-chan struct{} { return nil }

// ExitCode is -1.
func (c *Child) ExitCode() int { return -1 }

// Report is empty.
func (c *Child) Report() Report { return Report{} }

// StartError is nil.
func (c *Child) StartError() error { return nil }

// Leftovers is 0.
func (c *Child) Leftovers() int { return 0 }

// PID is 0.
func (c *Child) PID() int { return 0 }

// CommandPID is 0.
func (c *Child) CommandPID(time.Duration) int { return 0 }

// SetDeadline does nothing.
func (c *Child) SetDeadline(Deadline) {}

// Started is never closed.
func (c *Child) Started() <-chan struct{} { return nil }

// Stop does nothing.
func (c *Child) Stop(time.Duration) bool { return false }

// Guard fails on Windows.
func Guard(GuardOptions) int { return 1 }

// OpenReport opens the report pipe fd.
func OpenReport(fd int) *os.File { return os.NewFile(uintptr(fd), "report") }

// ErrStandbyGone: the idle guard is gone (never started on Windows).
var ErrStandbyGone = errors.New("supervisor: the idle guard is gone")

// Standby is never started on Windows.
type Standby struct{}

// Prestart fails on Windows.
func Prestart(Spec) (*Standby, error) { return nil, ErrUnsupported }

// Launch fails on Windows.
func (s *Standby) Launch([]string, Deadline) (*Child, error) { return nil, ErrUnsupported }

// Exited is never closed.
func (s *Standby) Exited() <-chan struct{} { return nil }

// PID is 0.
func (s *Standby) PID() int { return 0 }

// Close does nothing.
func (s *Standby) Close() {}

// OpenTerm opens the term pipe fd.
func OpenTerm(fd int) *os.File { return os.NewFile(uintptr(fd), "term") }

// OpenHold opens the incarnation's lock fd.
func OpenHold(fd int) *os.File { return os.NewFile(uintptr(fd), "incarnation lock") }
