package stackfile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
func TestRenderPinsTheDemoStack(t *testing.T) {
	out, err := Render(context.Background(), "lfp-demo", Path, demoStack(t), variables().Env())
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
	_, err := Render(context.Background(), "lfp-demo", Path, demoStack(t), v.Env())
	if err == nil || !strings.Contains(err.Error(), "not pinned to a digest") || !strings.Contains(err.Error(), "controller") {
		t.Fatalf("error %v, want one naming the unpinned service", err)
	}
}

func TestRenderRefusesAnInvalidStack(t *testing.T) {
	v := variables()
	bad := strings.Replace(string(demoStack(t)), "stop_grace_period: 10s", "stop_grace_seconds: 10", 1)
	_, err := Render(context.Background(), "lfp-demo", Path, []byte(bad), v.Env())
	if err == nil || !strings.Contains(err.Error(), Path) || !strings.Contains(err.Error(), "stop_grace_seconds") {
		t.Fatalf("error %v, want a validation error naming the file and the attribute", err)
	}
	if _, err := Render(context.Background(), "lfp-demo", Path, []byte("services: [oops"), v.Env()); err == nil {
		t.Fatal("a stack file that is not YAML was accepted")
	}
}
