package runloop

import "time"

// ExitLost is the exit code of `run --once` when the term ended by loss of the lease (deadline
// without renewal, or another holder) rather than by the command.
const ExitLost = 10

// Outcome is what Lead decided once a term is over.
type Outcome struct {
	// Exit: run stops contending and exits with ExitCode.
	Exit bool
	// ExitCode is the command's own exit code (128+N for signal N), or ExitLost.
	ExitCode int
	// ChildExited: the command exited by itself while the term was alive — the leader steps
	// down, and the engine gives the followers a poll interval before it contends again.
	ChildExited bool
	// Backoff, when positive, is how long run waits, with the term released, before it
	// contends again: the command keeps crashing (CrashBackoff).
	Backoff time.Duration
}
