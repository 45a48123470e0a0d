package scenario

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/ownership"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainertest"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// idleStack is a stack file of one service with no replicas on the released demo image: it
// exists on the Swarm and runs nothing.
func idleStack() string {
	return "version: \"3.8\"\nservices:\n  app:\n    image: " + shared.released.Demo + "\n    deploy:\n      replicas: 0\n"
}

// refused checks a run that must fail with exit code code and an error containing every part.
func refused(t *testing.T, r result, code int, parts ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d (error %v)", r.code, code, r.err)
	}
	for _, p := range parts {
		if r.err == nil || !strings.Contains(r.err.Error(), p) {
			t.Errorf("error %v, want one containing %q", r.err, p)
		}
	}
}

// TestExternalStackIsRefused: a stack of the configured name deployed with `docker stack
// deploy` is neither updated nor removed, and nothing is pushed for it.
func TestExternalStackIsRefused(t *testing.T) {
	w := newWorld(t, "dep-ext")
	host, reg, fake, stack := w.host, w.reg, w.fake, w.stack
	file := filepath.Join(t.TempDir(), "stack.yml")
	if err := os.WriteFile(file, []byte(idleStack()), 0o644); err != nil {
		t.Fatal(err)
	}
	leasetest.Docker(t, host, "stack", "deploy", "-c", file, stack)
	version := leasetest.Docker(t, host, "service", "inspect", "--format", "{{.Version.Index}}", stack+"_app")
	settings(t, env(t, host, fake.URL(), reg, stack))
	defer noSecrets(t)

	before := counts(fake, reg)
	r := run(t, "deploy", "--no-build-arm")
	refused(t, r, 1, "deployed outside Portainer", stack+"_app")
	if !errors.Is(r.err, ownership.ErrNotOurs) {
		t.Errorf("error %v, want ownership.ErrNotOurs", r.err)
	}
	refused(t, run(t, "remove"), 1, "deployed outside Portainer")
	if got := leasetest.Docker(t, host, "service", "inspect", "--format", "{{.Version.Index}}", stack+"_app"); got != version {
		t.Errorf("the external stack's service changed: version %s, was %s", got, version)
	}
	nothingWritten(t, fake, reg, before)
}

// TestWrongEndpointIsRefused: a record of the name on another endpoint of the same Swarm is
// not ours, and an endpoint that does not exist is an error naming it.
func TestWrongEndpointIsRefused(t *testing.T) {
	w := newWorld(t, "dep-other")
	host, reg, fake, stack := w.host, w.reg, w.fake, w.stack
	client, err := portainer.New(portainer.Options{URL: fake.URL(), APIKey: apiKey})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	swarmID, err := client.SwarmID(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateSwarmStack(ctx, 2, portainer.CreateStackRequest{Name: stack, SwarmID: swarmID, StackFileContent: idleStack()}); err != nil {
		t.Fatal(err)
	}
	settings(t, env(t, host, fake.URL(), reg, stack))
	defer noSecrets(t)

	before := counts(fake, reg)
	refused(t, run(t, "deploy", "--no-build-arm"), 1, "belongs to endpoint 2", "SWARM_LEASE_DEPLOY_ENDPOINT")
	refused(t, run(t, "remove"), 1, "belongs to endpoint 2")
	if recs := fake.Stacks(); len(recs) != 1 || recs[0].EndpointID != 2 {
		t.Errorf("records %+v, want the other endpoint's record untouched", recs)
	}

	t.Setenv("SWARM_LEASE_DEPLOY_ENDPOINT", "nosuch")
	refused(t, run(t, "deploy", "--dry-run"), 1, "nosuch")
	nothingWritten(t, fake, reg, before)
}

// TestFailuresChangeNothing: a bad API key, Portainer down, the registry down and a tag that
// was never published each stop the deploy with a clear error before anything is written.
func TestFailuresChangeNothing(t *testing.T) {
	w := newWorld(t, "dep-fail")
	host, reg, fake, stack := w.host, w.reg, w.fake, w.stack
	defer noSecrets(t)
	before := counts(fake, reg)

	t.Run("bad API key", func(t *testing.T) {
		vars := env(t, host, fake.URL(), reg, stack)
		vars["PORTAINER_API_KEY_FILE"] = "ptr_wrongKey0123456789"
		settings(t, vars)
		refused(t, run(t, "deploy", "--no-build-arm"), 1, "401", "check SWARM_LEASE_DEPLOY_PORTAINER_API_KEY (from file")
	})
	t.Run("registry down", func(t *testing.T) {
		vars := env(t, host, fake.URL(), reg, stack)
		vars["REGISTRY"] = "127.0.0.1:" + strconv.Itoa(freePort(t))
		settings(t, vars)
		refused(t, run(t, "deploy", "--no-build-arm"), 1, "the registry "+vars["REGISTRY"]+" (SWARM_LEASE_DEPLOY_REGISTRY, from variable")
	})
	t.Run("wrong registry token", func(t *testing.T) {
		vars := env(t, host, fake.URL(), reg, stack)
		vars["REGISTRY_TOKEN_FILE"] = "dckr_pat_wrongToken"
		settings(t, vars)
		refused(t, run(t, "deploy", "--no-build-arm"), 1, "refused the credentials", "SWARM_LEASE_DEPLOY_REGISTRY_TOKEN (from file", "401")
	})
	t.Run("tag not published", func(t *testing.T) {
		settings(t, env(t, host, fake.URL(), reg, stack))
		refused(t, run(t, "deploy", "--no-push-images", "--image-tag", "never-pushed"), 1, "never-pushed", "is not in the registry")
	})
	t.Run("a setting to fix", func(t *testing.T) {
		vars := env(t, host, fake.URL(), reg, stack)
		vars["REPLICAS"] = "many"
		settings(t, vars)
		refused(t, run(t, "deploy", "--dry-run"), 2, "SWARM_LEASE_DEPLOY_REPLICAS", `"many"`)
	})
	t.Run("Portainer down", func(t *testing.T) {
		settings(t, env(t, host, fake.URL(), reg, stack))
		fake.Stop()
		refused(t, run(t, "deploy", "--no-build-arm"), 1, "unreachable", "SWARM_LEASE_DEPLOY_PORTAINER_URL (from variable")
	})
	nothingDeployed(t, fake, reg, before, host, stack)
}

// TestDryRunWithUsernameAndPassword: without an API key the deployer logs in with the user's
// password; a dry run's only call that is not a read is that login.
func TestDryRunWithUsernameAndPassword(t *testing.T) {
	host := leasetest.SwarmHost(t)
	reg := setup(t)
	fake := portainertest.Start(t, portainertest.Options{DockerHost: host, Users: map[string]string{"deployer": portainerPassword}})
	stack := uniqueName("dep-login")
	vars := env(t, host, fake.URL(), reg, stack)
	delete(vars, "PORTAINER_API_KEY_FILE")
	vars["PORTAINER_USERNAME"] = "deployer"
	vars["PORTAINER_PASSWORD_FILE"] = portainerPassword
	settings(t, vars)
	defer noSecrets(t)
	before := counts(fake, reg)

	r := run(t, "deploy", "--dry-run")
	if r.code != 0 || !strings.Contains(r.out, "stack "+stack+": create") {
		t.Fatalf("dry run: exit %d: %v", r.code, r.err)
	}
	for _, w := range fake.Writes()[before.portainer:] {
		if w.Method != "POST" || w.Path != "/api/auth" {
			t.Errorf("dry run wrote to Portainer: %+v", w)
		}
	}
	if w := reg.Writes(); len(w) != before.registry {
		t.Errorf("the registry was written to: %v", w[before.registry:])
	}
}
