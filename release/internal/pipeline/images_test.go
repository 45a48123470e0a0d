package pipeline

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/regbo/lfp-swarm-lease/images"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"

	"github.com/regbo/lfp-swarm-lease/release/internal/testrepo"
)

// The throwaway release's images, as release.yml pushes them (the image recipe, images/), go
// to a loopback registry as multi-platform indexes, and the controller image run as a service
// in the test Swarm says the release's version.
func TestImagesOfTheThrowawayReleaseRunInTheSwarm(t *testing.T) {
	dockerHost := leasetest.SwarmHost(t)
	docker := requireCommand(t, "docker", "apt-get install docker.io")
	clone := taggedClone(t)
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	host := strings.TrimPrefix(reg.URL, "http://")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel) // after the service's removal, which is registered later and runs first
	commit := testrepo.Git(t, clone, "rev-parse", "HEAD")
	pub, err := images.Publish(ctx, images.Build{Root: clone, Version: throwawayVersion, Commit: commit}, host, throwawayVersion)
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	for _, ref := range []string{pub.Controller, pub.Demo} {
		r, err := name.ParseReference(ref, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		idx, err := remote.Index(r, remote.WithContext(ctx))
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		m, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		var platforms []string
		for _, d := range m.Manifests {
			platforms = append(platforms, d.Platform.String())
		}
		if strings.Join(platforms, " ") != "linux/amd64 linux/arm64" {
			t.Errorf("%s: platforms %v, want linux/amd64 and linux/arm64", ref, platforms)
		}
	}

	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, docker, args...)
		cmd.Env = append(os.Environ(), "DOCKER_HOST="+dockerHost)
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	service := fmt.Sprintf("release-test-%d", time.Now().UnixNano())
	if out, err := run("service", "create", "--detach", "--quiet", "--name", service, "--restart-condition", "none", pub.Controller, "version"); err != nil {
		t.Fatalf("docker service create: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := run("service", "rm", service); err != nil {
			t.Errorf("docker service rm %s: %v\n%s", service, err, out)
		}
	})
	deadline := time.Now().Add(3 * time.Minute)
	for {
		state, err := run("service", "ps", "--no-trunc", "--format", "{{.CurrentState}} {{.Error}}", service)
		if err != nil {
			t.Fatalf("docker service ps: %v\n%s", err, state)
		}
		if strings.HasPrefix(state, "Complete") {
			break
		}
		if strings.HasPrefix(state, "Failed") || strings.HasPrefix(state, "Rejected") || time.Now().After(deadline) {
			t.Fatalf("the version task: %s", state)
		}
		time.Sleep(200 * time.Millisecond) // polling the task state; there is no event to wait on here
	}
	logs, err := run("service", "logs", "--raw", service)
	if err != nil {
		t.Fatalf("docker service logs: %v\n%s", err, logs)
	}
	if !strings.Contains(logs, throwawayVersion) || !strings.Contains(logs, commit[:7]) {
		t.Fatalf("lfp-swarm-lease version in the image said %q, want %s and commit %s", logs, throwawayVersion, commit)
	}
}
