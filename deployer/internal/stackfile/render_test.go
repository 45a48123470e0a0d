package stackfile

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func demoStack(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", Path))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func variables() Variables {
	return Variables{
		DemoImage: "127.0.0.1:5000/lfp-swarm-lease-demo@" + digest, LeaseTTLMs: 4000, Replicas: 2,
		EndpointMode: "dnsrr", DemoPort: 18088, DemoPortMode: "host", DockerSocket: "/run/docker.sock",
	}
}

// TestRenderPinsTheDemoStack renders the real stack file: both services on the pinned image,
// the variables substituted.
// env is v's environment for the stack file content.
func env(t *testing.T, v Variables, content []byte) []portainer.EnvVar {
	t.Helper()
	e, err := v.Env(content)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Portainer runs docker stack deploy with its own environment plus the stack's Env, so Env has
// every variable the stack file uses — found here by a pattern of the test's own, not by the
// code under test — with the settings' values and, for the rest, the file's defaults.
func TestEnvHasEveryVariableOfTheStackFile(t *testing.T) {
	content := demoStack(t)
	got := map[string]string{}
	for _, v := range env(t, variables(), content) {
		got[v.Name] = v.Value
	}
	for _, m := range regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?`).FindAllStringSubmatch(string(content), -1) {
		value, ok := got[m[1]]
		switch {
		case !ok:
			t.Errorf("Env lacks ${%s}, which %s uses: it would take Portainer's environment's value", m[1], Path)
		case m[1] == "LEASE_TTL_MS" && value != "4000", m[1] == "CONTROLLER_REPLICAS" && value != "2":
			t.Errorf("%s=%s, want the setting's value", m[1], value)
		case m[1] == "LEASE_KEEP_ALIVE_MS" && value != m[2]:
			t.Errorf("%s=%s, want the stack file's default %s", m[1], value, m[2])
		}
	}
	if _, err := variables().Env(append(content, []byte("x-new: ${NEW_SETTING}\n")...)); err == nil || !strings.Contains(err.Error(), "NEW_SETTING") {
		t.Fatalf("a variable without a default or setting: %v, want an error naming it", err)
	}
}

func TestRenderPinsTheDemoStack(t *testing.T) {
	out, err := Render(context.Background(), "lfp-demo", Path, demoStack(t), env(t, variables(), demoStack(t)))
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	if n := strings.Count(text, "image: 127.0.0.1:5000/lfp-swarm-lease-demo@"+digest); n != 2 {
		t.Errorf("the pinned image appears %d times, want 2 (both services):\n%s", n, text)
	}
	for _, want := range []string{"replicas: 2", `SWARM_LEASE_TTL_MS: "4000"`, "endpoint_mode: dnsrr", "mode: host", "published: \"18088\"", "source: /run/docker.sock"} {
		if !strings.Contains(text, want) {
			t.Errorf("rendered stack lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "${") {
		t.Errorf("rendered stack still has variables:\n%s", text)
	}
}

func TestRenderRefusesAnUnpinnedImage(t *testing.T) {
	v := variables()
	v.DemoImage = "example/lfp-swarm-lease-demo:latest"
	_, err := Render(context.Background(), "lfp-demo", Path, demoStack(t), env(t, v, demoStack(t)))
	if err == nil || !strings.Contains(err.Error(), "not pinned to a digest") || !strings.Contains(err.Error(), "controller") {
		t.Fatalf("error %v, want one naming the unpinned service", err)
	}
}

func TestRenderRefusesAnInvalidStack(t *testing.T) {
	v := variables()
	bad := strings.Replace(string(demoStack(t)), "stop_grace_period: 10s", "stop_grace_seconds: 10", 1)
	_, err := Render(context.Background(), "lfp-demo", Path, []byte(bad), env(t, v, demoStack(t)))
	if err == nil || !strings.Contains(err.Error(), Path) || !strings.Contains(err.Error(), "stop_grace_seconds") {
		t.Fatalf("error %v, want a validation error naming the file and the attribute", err)
	}
	if _, err := Render(context.Background(), "lfp-demo", Path, []byte("services: [oops"), env(t, v, demoStack(t))); err == nil {
		t.Fatal("a stack file that is not YAML was accepted")
	}
}
