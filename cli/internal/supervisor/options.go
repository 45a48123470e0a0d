package supervisor

import (
	"io"
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
}
