package runloop

import (
	"log/slog"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/supervisor"
)

// CommandTerm is a term as the supervision of its command takes it, whatever engine won it:
// when it ends, its deadline, what the command learns of it.
type CommandTerm struct {
	// Done is closed when the term ends.
	Done <-chan struct{}
	// Remaining is how long until the term's deadline, as the engine last confirmed it by its
	// monotonic clock; Renewed receives a value after each renewal that moved it. The loop
	// hands every deadline to the guard, which stops the command the grace period before it
	// on its own clock, whatever run is doing. Nil: the guard knows no deadline (tests).
	Remaining func() time.Duration
	Renewed   <-chan struct{}
	// Env is what the command learns of its term (<PREFIX>_FENCE, <PREFIX>_HOLDER_ID, …); the
	// loop adds it to its own environment.
	Env []string
	// Log carries the term's identity (namespace or room, holder, fence).
	Log *slog.Logger
	// Ended returns the attributes that say why the term ended (at least "reason"), logged when
	// the loop stops the command; nil logs none.
	Ended func() []any
}

// deadline is the term's deadline for the guard (zero without Remaining).
func (t CommandTerm) deadline() supervisor.Deadline {
	if t.Remaining == nil {
		return supervisor.Deadline{}
	}
	return supervisor.DeadlineIn(t.Remaining)
}
