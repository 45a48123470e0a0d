package leasetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildImage builds a FROM scratch image named tag holding the static binary at binary (built
// with CGO_ENABLED=0) as its entrypoint, on the Docker engine at host. Nothing can be pulled in
// tests, so every image is built locally; the legacy builder needs no BuildKit.
func BuildImage(t testing.TB, host, binary, tag string) {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	dockerfile := "FROM scratch\nCOPY app /app\nENTRYPOINT [\"/app\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("docker", "-H", host, "build", "-q", "-t", tag, dir)
	cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
}

// Docker runs the docker CLI against host and returns its trimmed output, failing the test on
// error.
func Docker(t testing.TB, host string, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", append([]string{"-H", host}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %v: %v\n%s", args, err, out)
	}
	return string(trimNewline(out))
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
