package runcmd

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/runloop"
	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
	"github.com/regbo/lfp-swarm-lease/lease"
)

// An engine wins run's terms, whatever engine holds them: the Swarm, etcd or file lease (a
// lease.Contender: leaseEngine) or a room of an elections server (a swarmlease.RoomContender:
// roomEngine). run has one loop over it (contend) and one supervision of the command
// (runloop).
type engine interface {
	// Contend contends until ctx ends, and calls lead with every term it wins, in the calling
	// goroutine. It hands the term back (releases it) once lead has returned; when lead returned
	// before the term ended (the command exited), it leaves the followers a poll interval before
	// it contends again. It returns nil when ctx ends, errStopContending when lead returned it,
	// another error of lead's, or an error that retrying cannot fix.
	Contend(ctx context.Context, lead func(wonTerm) error) error
}

// errStopContending, returned by a lead function, ends Contend after the term is handed back.
var errStopContending = lease.ErrStopContending

// wonTerm is one term as run sees it, whatever engine won it.
type wonTerm struct {
	// Fence is the term's fencing token: strictly increasing, never reused. (A room's `term`
	// field on the elections API is this number.)
	Fence uint64
	// Holder is the identity that holds the term: on the lease, the holder, node and task ids;
	// in a room, the candidate id as HolderID and run's own node and task ids, if any.
	Holder lease.Identity
	// Namespace is the lease's namespace, or the room's id (the elections API's election_id).
	Namespace string
	// Done is closed when the term ends; Cause then says why.
	Done  <-chan struct{}
	Cause func() error
	// Remaining is how long until the term's deadline, by this host's monotonic clock; Renewed
	// receives a value after each renewal that moved it.
	Remaining func() time.Duration
	Renewed   <-chan struct{}
}

// childEnv is what the command learns of its term, under the configured prefix.
func childEnv(prefix string, t wonTerm) []string {
	p := prefix + "_"
	return []string{
		p + "FENCE=" + strconv.FormatUint(t.Fence, 10),
		p + "HOLDER_ID=" + t.Holder.HolderID,
		p + "NODE_ID=" + t.Holder.NodeID,
		p + "TASK_ID=" + t.Holder.TaskID,
		p + "NAMESPACE=" + t.Namespace,
	}
}

// logAttrs names the term in every line of it.
func (t wonTerm) logAttrs() []any {
	return []any{"namespace", t.Namespace, "holder_id", t.Holder.HolderID, "task_id", t.Holder.TaskID, "fence", t.Fence}
}

// forLoop is the term as the supervision loop takes it.
func (t wonTerm) forLoop(envPrefix string, log *slog.Logger) runloop.CommandTerm {
	return runloop.CommandTerm{
		Done: t.Done, Remaining: t.Remaining, Renewed: t.Renewed,
		Env: childEnv(envPrefix, t),
		Log: log.With(t.logAttrs()...),
		Ended: func() []any {
			left := t.Remaining()
			return []any{"reason", endReason(t.Cause()), "safety_deadline", time.Now().Add(left), "deadline_in", left.Round(time.Millisecond)}
		},
	}
}

// endReason names why a term ended, in one vocabulary for both engines.
func endReason(cause error) string {
	switch {
	case cause == nil:
		return "stepped down"
	case errors.Is(cause, lease.ErrDeadline), errors.Is(cause, swarmlease.ErrDeadline):
		return "deadline"
	case errors.Is(cause, lease.ErrIdentityInUse):
		return "lost: another process uses this identity"
	case errors.Is(cause, swarmlease.ErrHeldByOther):
		return "lost: another term holds the room"
	case errors.Is(cause, swarmlease.ErrVacant):
		return "lost: the lease expired"
	case errors.Is(cause, lease.ErrLost), errors.Is(cause, swarmlease.ErrLost):
		return "lost"
	case errors.Is(cause, lease.ErrSteppedDown), errors.Is(cause, swarmlease.ErrResigned):
		return "stepped down"
	default:
		return "shutdown"
	}
}
