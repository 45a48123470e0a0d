package supervisor

import (
	"io"
	"os"
	"time"
)

// GuardOptions configure the guard process.
type GuardOptions struct {
	// Argv is the command and its arguments.
	Argv []string
	// Grace is the time between SIGTERM and SIGKILL.
	Grace time.Duration
	// Parent is the supervisor's PID (0: none); a guard whose parent is already gone exits.
	Parent int
	// Cgroup: run the command in a cgroup v2 of its own when one can be created.
	Cgroup bool
	// Report receives the guard's reports (nil: none).
	Report io.Writer
	// Hold, when set, is the incarnation's lock, which the command inherits (as its file
	// descriptor 3): held by the guard and the command for as long as either lives.
	Hold *os.File
	// Term, when set, is the control pipe: the guard starts the command only once the term
	// arrives on it (the command's environment and the term's deadline, see Standby.Launch),
	// and exits without starting anything if it ends first or the guard is told to stop. After
	// the term it carries the deadline of every renewal, and its end stops the command. Nil:
	// start the command at once, with the guard's own environment and no deadline.
	Term io.Reader
}
