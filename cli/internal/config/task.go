package config

import "github.com/regbo/lfp-swarm-lease/settings"

// Task is the discovered Swarm task (see Loader.Discover).
type Task struct {
	ServiceName, NodeID, TaskID string
	// Container is the task's container ID; Ended, that Swarm reports the task ended, or its
	// state could not be read (swarmstore.Task).
	Container string
	Ended     bool
	// Labels are the container's labels.
	Labels map[string]string
}

// labels is the layer of task's container labels: lower(prefix).key sets any setting, and
// Swarm's own labels give the namespace and identity unless such a label sets them.
func labels(s *settings.Schema, task Task) settings.Layer {
	l := s.Labels(task.Labels)
	swarm := func(key, value, label string) {
		if _, set := l.Source(key); !set && value != "" {
			l.Set(key, value, Source{Kind: FromLabel, Name: label})
		}
	}
	swarm(KeyNamespace, task.ServiceName, "com.docker.swarm.service.name")
	swarm(KeyHolderID, task.NodeID, "com.docker.swarm.node.id")
	swarm(KeyNodeID, task.NodeID, "com.docker.swarm.node.id")
	swarm(KeyTaskID, task.TaskID, "com.docker.swarm.task.id")
	return l
}
