package swarmstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// The Swarm store is a witness (lease.Witness): it proves a term's holder gone when Swarm reports
// the term's task ended in a way only the task's own node sets, and only once the container has
// exited. The holder's incarnation must be the init process of that very container
// (lease.Incarnation.Container): the container of a Swarm task has a PID namespace of its own,
// and the kernel reports its init's exit only once every other process in it is gone — run, its
// guard, its command and everything they started. docs/safety.md §4a names the swarmkit code
// each state comes from, and what never counts: a paused container (still running), a node
// down or unreachable, rejected, orphaned, a desired state without the observed one, a task no
// longer found.
var _ lease.Witness = (*Store)(nil)

// recheckTask is how often a follower asks Swarm again about a live holder's task: one read of
// the manager's in-memory store, no Raft write.
const recheckTask = 500 * time.Millisecond

// exitErrPrefix starts the error of a task whose container exited on its own or was killed
// (the executor's exitError): another failure may leave the container running.
const exitErrPrefix = "task: non-zero exit ("

// Gone implements lease.Witness.
func (s *Store) Gone(ctx context.Context, rec lease.Record) (string, time.Duration) {
	inc, err := lease.ParseIncarnation(rec.Incarnation)
	if err != nil || inc.Container == "" || rec.TaskID == "" {
		return "", 0
	}
	s.mu.Lock()
	proven := s.proven[rec.Incarnation]
	s.mu.Unlock()
	if proven != "" {
		return proven, 0
	}
	res, err := s.docker.TaskInspect(ctx, rec.TaskID, client.TaskInspectOptions{})
	if err != nil {
		return "", recheckTask
	}
	why := taskEnded(res.Task, inc.Container)
	if why == "" {
		return "", recheckTask
	}
	ev := fmt.Sprintf("Swarm reports the holder's task %s %s on node %s", rec.TaskID, why, res.Task.NodeID)
	// Latched: a later read may show the task rejected by the constraint enforcer, or no
	// longer found — never that its container runs again under this incarnation.
	s.mu.Lock()
	s.proven = map[string]string{rec.Incarnation: ev}
	s.mu.Unlock()
	return ev, 0
}

// taskEnded says how t ended when its observed state proves that container's init exited —
// "" when it does not: complete; failed with the executor's exit error; shutdown — each set only
// by the task's node, after the daemon saw the container stop — with the container's status
// read by that node, naming that container, with no process.
func taskEnded(t swarm.Task, container string) string {
	cs := t.Status.ContainerStatus
	if cs == nil || cs.ContainerID == "" || cs.ContainerID != container || cs.PID != 0 {
		return ""
	}
	switch t.Status.State {
	case swarm.TaskStateComplete:
		return "complete (its container exited 0)"
	case swarm.TaskStateFailed:
		if strings.HasPrefix(t.Status.Err, exitErrPrefix) {
			return fmt.Sprintf("failed (%s)", t.Status.Err)
		}
	case swarm.TaskStateShutdown:
		return "shut down (its container stopped)"
	}
	return ""
}

// running reports whether a task's observed state is one before its end.
func running(st swarm.TaskState) bool {
	switch st {
	case swarm.TaskStateComplete, swarm.TaskStateShutdown, swarm.TaskStateFailed, swarm.TaskStateRejected,
		swarm.TaskStateRemove, swarm.TaskStateOrphaned:
		return false
	}
	return true
}
