package scenario

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainertest"
	"github.com/regbo/lfp-swarm-lease/images"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// shared is what the scenarios share, set up once per test binary: the registry and a
// published release, tag "released" (amd64 only), for --no-push-images.
var shared struct {
	once     sync.Once
	reg      *recordingRegistry
	released images.Published
	err      error
}

// setup starts the registry and publishes the release once; the registry lives for the whole
// test binary, so that the Swarm can pull from it in every scenario.
func setup(t *testing.T) *recordingRegistry {
	t.Helper()
	shared.once.Do(func() {
		shared.reg = startRegistry()
		b := images.Build{Root: repoRoot(t), Version: "9.9.9", Date: "2026-01-01T00:00:00Z", Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}}}
		shared.released, shared.err = images.PublishTo(context.Background(), b, images.Target{Registry: shared.reg.host() + "/team", Tag: "released", Keychain: pusher{}})
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.reg
}

// pusher is the registry's writer, for the release the scenarios deploy.
type pusher struct{}

func (pusher) Resolve(authn.Resource) (authn.Authenticator, error) {
	return &authn.Basic{Username: "pusher", Password: registryToken}, nil
}

// env are the settings of a scenario against fake and reg for stack name.
func env(t *testing.T, host, fakeURL string, reg *recordingRegistry, stack string) map[string]string {
	return map[string]string{
		"PORTAINER_URL":          fakeURL,
		"PORTAINER_API_KEY_FILE": apiKey,
		"ENDPOINT":               "local",
		"STACK_NAME":             stack,
		"REGISTRY":               reg.host(),
		"IMAGE_NAMESPACE":        "team",
		"REGISTRY_USERNAME":      "pusher",
		"REGISTRY_TOKEN_FILE":    registryToken,
		"REPLICAS":               "2",
		"LEASE_TTL_MS":           "3000",
		"ENDPOINT_MODE":          "dnsrr",
		"DEMO_PORT_MODE":         "host",
		"DEMO_PORT":              strconv.Itoa(freePort(t)),
		"DOCKER_SOCKET":          socketPath(t, host),
	}
}

// fakePortainer starts the deploying fake with two endpoints on the test Swarm: local (1) and
// other (2).
func fakePortainer(t *testing.T, host string) *portainertest.Server {
	return portainertest.Start(t, portainertest.Options{
		DockerHost: host, APIKeys: []string{apiKey},
		Endpoints: []portainertest.Endpoint{{ID: 1, Name: "local", Type: 1}, {ID: 2, Name: "other", Type: 1}},
	})
}

// world is one scenario's registry, fake Portainer and stack name on the test Swarm.
type world struct {
	host  string
	reg   *recordingRegistry
	fake  *portainertest.Server
	stack string
}

// newWorld sets a scenario up; its cleanup removes what the stack left on the Swarm.
func newWorld(t *testing.T, prefix string) world {
	t.Helper()
	host := leasetest.SwarmHost(t)
	w := world{host: host, reg: setup(t), fake: fakePortainer(t, host), stack: uniqueName(prefix)}
	removeLeftovers(t, host, w.stack)
	return w
}

// serviceImage is a service's pinned image.
func serviceImage(t *testing.T, host, service string) string {
	return leasetest.Docker(t, host, "service", "inspect", "--format", "{{.Spec.TaskTemplate.ContainerSpec.Image}}", service)
}

// running waits until every service of the stack runs its replicas on image.
func running(t *testing.T, host, stack, image string) {
	t.Helper()
	for _, svc := range []string{stack + "_controller", stack + "_demo"} {
		waitFor(t, svc+" running "+image, 3*time.Minute, func() bool {
			if !strings.HasPrefix(serviceImage(t, host, svc), image) {
				return false
			}
			out := leasetest.Docker(t, host, "service", "ps", "--filter", "desired-state=running", "--format", "{{json .}}", svc)
			if out == "" {
				return false
			}
			for _, line := range strings.Split(out, "\n") {
				var task struct{ CurrentState, Image string }
				if err := json.Unmarshal([]byte(line), &task); err != nil || !strings.HasPrefix(task.CurrentState, "Running") {
					return false
				}
			}
			return true
		})
	}
}

func noSecrets(t *testing.T) {
	t.Helper()
	transcript.mu.Lock()
	defer transcript.mu.Unlock()
	for _, secret := range []string{apiKey, registryToken, portainerPassword, "ptr_wrongKey", "dckr_pat_wrongToken"} {
		if strings.Contains(transcript.all.String(), secret) {
			t.Errorf("a secret appears in the output: %q", secret)
		}
	}
}

// TestDeployLifecycle: dry run (no write anywhere), first deploy (build, push, create; the
// demo's services start on the pushed digest, both platforms in the index), redeploy of a
// published tag (update; the services move to its digest), remove, remove again.
func TestDeployLifecycle(t *testing.T) {
	w := newWorld(t, "dep-life")
	host, reg, fake, stack := w.host, w.reg, w.fake, w.stack
	settings(t, env(t, host, fake.URL(), reg, stack))
	defer noSecrets(t)

	before := counts(fake, reg)
	dry := run(t, "deploy", "--dry-run")
	if dry.code != 0 {
		t.Fatalf("dry run: exit %d: %v", dry.code, dry.err)
	}
	for _, want := range []string{"stack " + stack + ": create", "images: build linux/amd64, linux/arm64 and push", "rendered stack", "endpoint_mode: dnsrr", "dry run: nothing was built, pushed or deployed"} {
		if !strings.Contains(dry.out, want) {
			t.Errorf("dry run output lacks %q", want)
		}
	}
	nothingDeployed(t, fake, reg, before, host, stack)

	first := run(t, "deploy")
	if first.code != 0 {
		t.Fatalf("first deploy: exit %d: %v", first.code, first.err)
	}
	if !strings.Contains(first.out, "created stack "+stack) {
		t.Errorf("first deploy output lacks the creation: %s", first.out)
	}
	recs := fake.Stacks()
	if len(recs) != 1 || recs[0].Name != stack || recs[0].EndpointID != 1 {
		t.Fatalf("records after the first deploy: %+v, want one for %s on endpoint 1", recs, stack)
	}
	var pushed string
	for _, v := range recs[0].Env {
		if v.Name == "DEMO_IMAGE" {
			pushed = v.Value
		}
	}
	if !strings.HasPrefix(pushed, reg.host()+"/team/lfp-swarm-lease-demo@sha256:") {
		t.Fatalf("DEMO_IMAGE %q, want the pushed demo image pinned to its digest", pushed)
	}
	checkPlatforms(t, pushed, "linux/amd64", "linux/arm64")
	running(t, host, stack, pushed)

	again := run(t, "deploy", "--no-push-images", "--image-tag", "released")
	if again.code != 0 {
		t.Fatalf("redeploy: exit %d: %v", again.code, again.err)
	}
	if shared.released.Demo == pushed || !strings.Contains(again.out, "updated stack "+stack) {
		t.Fatalf("redeploy: %s (released %s, first %s), want an update to a new digest", again.out, shared.released.Demo, pushed)
	}
	if recs := fake.Stacks(); len(recs) != 1 {
		t.Fatalf("records after the redeploy: %+v, want the one updated", recs)
	}
	running(t, host, stack, shared.released.Demo)

	removed := run(t, "remove")
	if removed.code != 0 || !strings.Contains(removed.out, "removed stack "+stack) {
		t.Fatalf("remove: exit %d: %s %v", removed.code, removed.out, removed.err)
	}
	waitFor(t, "the stack's services gone", time.Minute, func() bool { return services(t, host, stack) == "" })
	if recs := fake.Stacks(); len(recs) != 0 {
		t.Fatalf("records after remove: %+v", recs)
	}
	twice := run(t, "rm")
	if twice.code != 0 || !strings.Contains(twice.out, "nothing to remove") {
		t.Fatalf("second remove: exit %d: %s %v, want exit 0 and nothing to remove", twice.code, twice.out, twice.err)
	}
}

// checkPlatforms reads the index of ref from the registry and checks its platforms.
func checkPlatforms(t *testing.T, ref string, want ...string) {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(r)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range m.Manifests {
		got = append(got, d.Platform.String())
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s: platforms %v, want %v", ref, got, want)
	}
}
