package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// stackBin is the demo-stack binary, built once.
var stackBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "demo-stack-bin-")
	if err != nil {
		panic(err)
	}
	stackBin = filepath.Join(dir, "demo-stack")
	if out, err := exec.Command("go", "build", "-o", stackBin, ".").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// lockedBuffer is a process's output, read while it writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// upAt runs `demo-stack up` against dockerHost and returns its output and exit error once it
// exits — or, failing the test, when it starts to build images, or after 20 s.
func upAt(t *testing.T, dockerHost string) (string, error) {
	t.Helper()
	cmd := exec.Command(stackBin, "up", "--name", "demo-stack-test", "--port", "18999", "--platforms", "linux/amd64")
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+dockerHost)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	started := time.Now()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case err := <-done:
			if took := time.Since(started); took > 10*time.Second {
				t.Errorf("demo-stack up took %v to refuse, want seconds", took.Round(time.Millisecond))
			}
			return out.String(), err
		case <-deadline:
			cmd.Process.Kill()
			<-done
			t.Fatalf("demo-stack up against %s still runs after 20 s:\n%s", dockerHost, out.String())
		case <-time.After(20 * time.Millisecond): // the poll interval, not a synchronisation
			if strings.Contains(out.String(), "building") {
				cmd.Process.Kill()
				<-done
				t.Fatalf("demo-stack up against %s started to build images before checking the engine:\n%s", dockerHost, out.String())
			}
		}
	}
}

// TestUpWithoutAnEngineSaysHowToGetOne: no engine at DOCKER_HOST — demo-stack up refuses in
// seconds, before building anything, and says how to start a Swarm.
func TestUpWithoutAnEngineSaysHowToGetOne(t *testing.T) {
	sock := "unix://" + filepath.Join(t.TempDir(), "docker.sock")
	out, err := upAt(t, sock)
	if err == nil {
		t.Fatalf("demo-stack up without an engine succeeded:\n%s", out)
	}
	for _, want := range []string{"no Docker engine answers at DOCKER_HOST=" + sock, "scripts/test-swarm.sh start", "export DOCKER_HOST="} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not say %q:\n%s", want, out)
		}
	}
	if strings.Count(strings.TrimSpace(out), "\n") > 1 {
		t.Errorf("more than the one error line:\n%s", out)
	}
}

// testSwarm is the private test Swarm's engine (scripts/test-swarm.sh), or a skip.
func testSwarm(t *testing.T, variable string) string {
	t.Helper()
	host := os.Getenv(variable)
	if host == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set and CI=true: the Swarm tests must run (scripts/test-swarm.sh start)", variable)
		}
		t.Skipf("%s is not set: start the test Swarm with scripts/test-swarm.sh start", variable)
	}
	return host
}

// TestUpOnAnEngineOutsideASwarm: an engine that is no Swarm manager — refused in seconds,
// naming the engine and how to make one.
func TestUpOnAnEngineOutsideASwarm(t *testing.T) {
	plain := testSwarm(t, "SWARM_LEASE_TEST_PLAIN_DOCKER_HOST")
	out, err := upAt(t, plain)
	if err == nil {
		t.Fatalf("demo-stack up on an engine outside a Swarm succeeded:\n%s", out)
	}
	for _, want := range []string{"is not a Swarm manager", "docker swarm init", "scripts/test-swarm.sh start"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not say %q:\n%s", want, out)
		}
	}
}

// docker runs the docker CLI against host.
func docker(t *testing.T, host string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+host)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestDownSaysWhatItRemoved: demo-stack down names the services, network, volume and lease
// anchor it removed, and says so when there was nothing to remove.
func TestDownSaysWhatItRemoved(t *testing.T) {
	host := testSwarm(t, "SWARM_LEASE_TEST_DOCKER_HOST")
	name := fmt.Sprintf("down-test-%d", os.Getpid())
	// A stack of the demo's shape that runs nothing (no image is pulled): a service, the
	// stack's network, its ledger volume and the lease's anchor.
	file := filepath.Join(t.TempDir(), "stack.yml")
	os.WriteFile(file, []byte("version: \"3.8\"\nservices:\n  demo:\n    image: busybox:latest\n    deploy:\n      replicas: 0\n"), 0o644)
	docker(t, host, "stack", "deploy", "-c", file, name)
	docker(t, host, "volume", "create", "--label", "com.docker.stack.namespace="+name, name+"_ledger")
	docker(t, host, "service", "create", "--detach", "--name", name+"_controller-lease", "--replicas", "0", "busybox:latest")
	down := func() string {
		cmd := exec.Command(stackBin, "down", "--name", name, "--timeout", "2m")
		cmd.Env = append(os.Environ(), "DOCKER_HOST="+host)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("demo-stack down: %v\n%s", err, out)
		}
		return string(out)
	}
	out := down()
	for _, want := range []string{name + "_demo", name + "_default", name + "_ledger", name + "_controller-lease"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo-stack down does not name %s:\n%s", want, out)
		}
	}
	if left := docker(t, host, "service", "ls", "-q", "--filter", "name="+name); strings.TrimSpace(left) != "" {
		t.Errorf("services left: %s", left)
	}
	if again := down(); !strings.Contains(again, "nothing to remove") {
		t.Errorf("demo-stack down of a removed stack:\n%s\nwant it to say there was nothing to remove", again)
	}
}

// TestTestSwarmPrintsTheDockerHost: scripts/test-swarm.sh start names the DOCKER_HOST to export
// for `bun run demo:up`, not only the tests' variables.
func TestTestSwarmPrintsTheDockerHost(t *testing.T) {
	host := testSwarm(t, "SWARM_LEASE_TEST_DOCKER_HOST")
	dir := filepath.Dir(strings.TrimPrefix(host, "unix://"))
	cmd := exec.Command("../../../scripts/test-swarm.sh", "start")
	cmd.Env = append(os.Environ(), "SWARM_TEST_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/test-swarm.sh start: %v\n%s", err, out)
	}
	if want := "export DOCKER_HOST=" + host; !strings.Contains(string(out), want) {
		t.Fatalf("scripts/test-swarm.sh start does not print %q:\n%s", want, out)
	}
}
