package swarmstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/moby/moby/client"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// Labels Docker puts on every Swarm task container.
const (
	LabelServiceName = "com.docker.swarm.service.name"
	LabelNodeID      = "com.docker.swarm.node.id"
	LabelTaskID      = "com.docker.swarm.task.id"
)

// ErrNotATask means the container named by the hostname does not exist or is not a Swarm task.
var ErrNotATask = errors.New("swarm discovery: not running in a Swarm task")

// Task is what discovery learns about the Swarm task this process runs in.
type Task struct {
	// Container is the container's ID.
	Container string
	// ServiceName is the task's service: the default namespace.
	ServiceName string
	// NodeID is the node running the task: the default holder ID.
	NodeID string
	// TaskID is the task's ID.
	TaskID string
	// Labels are all the container's labels, for settings given as labels.
	Labels map[string]string
	// Ended: Swarm reports the task ended, or its state could not be read — the container was
	// started again outside Swarm (docker start, docker restart), whose end Swarm can no longer
	// report, or nothing can be said of it.
	Ended bool
}

// Discover inspects the container named hostname (Docker's default hostname of a task
// container is its short ID) and reads the Swarm task labels. It returns ErrNotATask when no
// such container exists or it carries no task ID — a hard-coded hostname, or not in Swarm.
func Discover(ctx context.Context, docker *client.Client, hostname string) (Task, error) {
	if hostname == "" {
		return Task{}, fmt.Errorf("%w: HOSTNAME is empty", ErrNotATask)
	}
	res, err := docker.ContainerInspect(ctx, hostname, client.ContainerInspectOptions{})
	if err != nil {
		if err = classify(err, false); errors.Is(err, lease.ErrNotFound) {
			return Task{}, fmt.Errorf("%w: no container named %q on %s", ErrNotATask, hostname, docker.DaemonHost())
		}
		return Task{}, fmt.Errorf("swarm discovery: inspect container %q: %w", hostname, err)
	}
	var labels map[string]string
	if res.Container.Config != nil {
		labels = res.Container.Config.Labels
	}
	task := Task{
		Container:   res.Container.ID,
		ServiceName: labels[LabelServiceName],
		NodeID:      labels[LabelNodeID],
		TaskID:      labels[LabelTaskID],
		Labels:      labels,
	}
	if task.TaskID == "" {
		return Task{}, fmt.Errorf("%w: container %q has no %s label", ErrNotATask, hostname, LabelTaskID)
	}
	t, err := docker.TaskInspect(ctx, task.TaskID, client.TaskInspectOptions{})
	task.Ended = err != nil || !running(t.Task.Status.State)
	return task, nil
}
