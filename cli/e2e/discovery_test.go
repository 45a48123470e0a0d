package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/images/imagestest"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// TestDiscoveryInSwarmTask runs try-acquire as a real Swarm service with the Docker socket
// mounted and the default hostname, and checks that the namespace, holder, node and task came
// from the task's own labels.
func TestDiscoveryInSwarmTask(t *testing.T) {
	host := leasetest.SwarmHost(t)
	static := filepath.Join(t.TempDir(), "lfp-swarm-lease")
	build := exec.Command("go", "build", "-o", static, "../cmd/lfp-swarm-lease")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("static build: %v\n%s", err, out)
	}
	image := "lfp-swarm-lease-test:discovery"
	imagestest.Load(t, host, image, imagestest.Image(t, static))

	service := "disc-" + leasetest.Namespace(t)
	socket := strings.TrimPrefix(host, "unix://")
	leasetest.Docker(t, host, "service", "create", "-d", "--name", service, "--restart-condition", "none",
		"--no-resolve-image", "--mount", "type=bind,source="+socket+",target=/var/run/docker.sock",
		image, "try-acquire", "--json")
	t.Cleanup(func() {
		exec.Command("docker", "-H", host, "service", "rm", service).Run()
		exec.Command("docker", "-H", host, "service", "rm", service+"-lease").Run()
	})

	anchor := service + "-lease"
	var labels string
	for deadline := time.Now().Add(60 * time.Second); ; {
		out, err := exec.Command("docker", "-H", host, "service", "inspect", "--format",
			`{{index .Spec.Labels "lfp-swarm-lease.holder_id"}} {{index .Spec.Labels "lfp-swarm-lease.node_id"}} {{index .Spec.Labels "lfp-swarm-lease.task_id"}} {{index .Spec.Labels "lfp-swarm-lease.namespace"}}`,
			anchor).Output()
		if err == nil && !strings.HasPrefix(string(out), " ") {
			labels = strings.TrimSpace(string(out))
			break
		}
		if time.Now().After(deadline) {
			logs, _ := exec.Command("docker", "-H", host, "service", "ps", "--no-trunc", service).CombinedOutput()
			t.Fatalf("no holder on anchor %s after 60 s; tasks:\n%s", anchor, logs)
		}
		time.Sleep(200 * time.Millisecond) // poll for the task to run
	}
	nodeID := leasetest.Docker(t, host, "info", "--format", "{{.Swarm.NodeID}}")
	taskID := leasetest.Docker(t, host, "service", "ps", "-q", "--no-trunc", service)
	want := strings.Join([]string{nodeID, nodeID, taskID, service}, " ")
	if labels != want {
		t.Fatalf("anchor holder/node/task/namespace = %q, want %q", labels, want)
	}
}
