package swarmstore

import (
	"testing"

	"github.com/moby/moby/api/types/swarm"
)

// Which observed task states prove the recorded container gone (docs/safety.md §4a): only the
// ends the task's own node reports once the container stopped, naming that container, with no
// process left.
func TestOnlyATaskEndedByItsNodeProvesItsContainerGone(t *testing.T) {
	const ctr = "4f1c"
	status := func(state swarm.TaskState, err string, cs *swarm.ContainerStatus) swarm.Task {
		return swarm.Task{Status: swarm.TaskStatus{State: state, Err: err, ContainerStatus: cs}}
	}
	gone := &swarm.ContainerStatus{ContainerID: ctr, PID: 0, ExitCode: 137}
	for _, c := range []struct {
		name string
		task swarm.Task
		want bool
	}{
		{"killed", status(swarm.TaskStateFailed, "task: non-zero exit (137)", gone), true},
		{"exited 0", status(swarm.TaskStateComplete, "", gone), true},
		{"stopped by an update", status(swarm.TaskStateShutdown, "", gone), true},
		{"running", status(swarm.TaskStateRunning, "", &swarm.ContainerStatus{ContainerID: ctr, PID: 42}), false},
		{"paused (still running)", status(swarm.TaskStateRunning, "", &swarm.ContainerStatus{ContainerID: ctr, PID: 42}), false},
		{"failed to stop", status(swarm.TaskStateFailed, "cannot stop container: tried to kill container", gone), false},
		{"rejected by the constraint enforcer", status(swarm.TaskStateRejected, "assigned node no longer meets constraints", gone), false},
		{"orphaned (node down 24 h, node rm --force)", status(swarm.TaskStateOrphaned, "", nil), false},
		{"never placed (the scheduler's shutdown)", status(swarm.TaskStateShutdown, "", nil), false},
		{"a terminal state with a live process (a revived container)", status(swarm.TaskStateFailed, "task: non-zero exit (2)", &swarm.ContainerStatus{ContainerID: ctr, PID: 16608}), false},
		{"another container", status(swarm.TaskStateFailed, "task: non-zero exit (137)", &swarm.ContainerStatus{ContainerID: "9a9a", PID: 0}), false},
		{"no container id", status(swarm.TaskStateComplete, "", &swarm.ContainerStatus{PID: 0}), false},
		{"desired shutdown, observed running", swarm.Task{DesiredState: swarm.TaskStateShutdown, Status: swarm.TaskStatus{State: swarm.TaskStateRunning,
			ContainerStatus: &swarm.ContainerStatus{ContainerID: ctr, PID: 42, ExitCode: -1}}}, false},
	} {
		if got := taskEnded(c.task, ctr) != ""; got != c.want {
			t.Errorf("%s: proves the container gone = %v, want %v", c.name, got, c.want)
		}
	}
}
