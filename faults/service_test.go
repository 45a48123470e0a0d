package faults_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/regbo/lfp-swarm-lease/faults/cluster"
	"github.com/regbo/lfp-swarm-lease/faults/contend"
	"github.com/regbo/lfp-swarm-lease/images/imagestest"
)

// serviceName is the containerised supervisors' service, and so their election's namespace
// (discovered from their tasks, as in production).
const serviceName = "faults-run"

// serviceImage is the tag of the image recipe's image (images/imagestest) of the static
// lfp-swarm-lease, its entrypoint, and faultchild beside it.
const serviceImage = "lfp-swarm-lease-faults:run"

var serviceImageOnce struct {
	sync.Mutex
	img v1.Image
}

// service is the containerised supervisors of a rig: a global service of `lfp-swarm-lease run
// -- faultchild`, one task on each manager, `run` the init of its container (so that Swarm's
// report of the task's end proves every process of it gone). Each task talks to its own
// node's engine (its socket bind-mounted, chosen by the node's hostname), and its identity —
// the node's ID as holder, the task's ID — is discovered from its labels; the children log to
// the rig's log, whose directory is bind-mounted into every task.
type service struct {
	c    *cluster.Cluster
	logs strings.Builder // the containers' output, kept before the service is removed
	kept bool
	gone bool
}

// deployService loads the image into every engine, creates the service and waits until a task
// runs on every manager.
func deployService(t *testing.T, c *cluster.Cluster, bins contend.Binaries, log string) *service {
	t.Helper()
	serviceImageOnce.Lock()
	if serviceImageOnce.img == nil {
		serviceImageOnce.img = imagestest.Image(t, bins.Lease, bins.Child)
	}
	img := serviceImageOnce.img
	serviceImageOnce.Unlock()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	for n := 1; n <= cluster.Nodes; n++ {
		imagestest.Load(t, c.Host(n), serviceImage, img)
		// The socket's name by the node's hostname, which a service's mount can name.
		name, err := c.Docker(ctx, n, "info", "--format", "{{.Name}}")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(strings.TrimPrefix(c.Host(n), "unix://"), filepath.Join(c.Dir, name+".sock")); err != nil {
			t.Fatal(err)
		}
	}
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	if _, err := c.Docker(ctx, 1, "service", "create", "-d", "--no-resolve-image", "--name", serviceName,
		"--mode", "global", "--stop-grace-period", "5s", "--restart-delay", "1s",
		"--mount", "type=bind,source="+c.Dir+"/{{.Node.Hostname}}.sock,target=/var/run/docker.sock",
		"--mount", "type=bind,source="+filepath.Dir(log)+",target=/shared",
		"--env", "FAULTCHILD_LOG=/shared/"+filepath.Base(log),
		"--env", "SWARM_LEASE_TTL_MS="+ms(faultTTL), "--env", "SWARM_LEASE_SHUTDOWN_TIMEOUT_MS="+ms(faultGrace),
		"--env", "SWARM_LEASE_DEFAULT_POLL_MS="+ms(faultPoll), "--env", "SWARM_LEASE_MAX_CLOCK_SKEW_MS="+ms(faultSkew),
		"--env", "SWARM_LEASE_LISTEN=off",
		serviceImage, "run", "--", imagestest.Path(bins.Child)); err != nil {
		t.Fatal(err)
	}
	s := &service{c: c}
	s.waitTasks(t, time.Minute)
	return s
}

// waitTasks waits until one container of the service runs on every manager.
func (s *service) waitTasks(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		running := 0
		for n := 1; n <= cluster.Nodes; n++ {
			out, err := s.c.Docker(t.Context(), n, "ps", "-q", "--filter", "label=com.docker.swarm.service.name="+serviceName)
			if err == nil && len(strings.Fields(out)) == 1 {
				running++
			}
		}
		if running == cluster.Nodes {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d managers run a task of %s after %v", running, cluster.Nodes, serviceName, timeout)
		}
		time.Sleep(200 * time.Millisecond) // poll the engines
	}
}

// keepLogs keeps the output of every container of the service, once.
func (s *service) keepLogs() {
	if s.kept {
		return
	}
	s.kept = true
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for n := 1; n <= cluster.Nodes; n++ {
		ids, _ := s.c.Docker(ctx, n, "ps", "-aq", "--filter", "label=com.docker.swarm.service.name="+serviceName)
		for _, id := range strings.Fields(ids) {
			out, _ := s.c.Docker(ctx, n, "logs", "--timestamps", id)
			fmt.Fprintf(&s.logs, "node%d, container %s:\n%s\n", n, id, out)
		}
	}
}

// remove keeps the containers' output, removes the service (each `run` stops its child and
// releases) and returns how long its containers took to be gone.
func (s *service) remove(t *testing.T) time.Duration {
	if s.gone {
		return 0
	}
	s.gone = true
	s.keepLogs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	began := time.Now()
	if _, err := s.c.Docker(ctx, 1, "service", "rm", serviceName); err != nil {
		t.Error(err)
		return 0
	}
	for n := 1; n <= cluster.Nodes; n++ {
		for {
			out, err := s.c.Docker(ctx, n, "ps", "-q", "--filter", "label=com.docker.swarm.service.name="+serviceName)
			if err == nil && out == "" {
				break
			}
			if ctx.Err() != nil {
				t.Errorf("the containers of %s on node%d still run 2 minutes after its removal", serviceName, n)
				break
			}
			time.Sleep(100 * time.Millisecond) // poll for the containers to stop
		}
	}
	return time.Since(began).Round(time.Millisecond)
}

// dump logs the containers' output.
func (s *service) dump(t *testing.T) {
	s.keepLogs()
	t.Logf("the service's containers:\n%s", s.logs.String())
}
