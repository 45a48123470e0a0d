// Package stack runs the demo stack (deploy/stack.yml) on the Swarm at DOCKER_HOST with images
// built from this work tree: `bun run demo:up` / `demo:down`, and the browser test.
package stack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Options say which stack, where.
type Options struct {
	// Name is the stack's name (its services are NAME_controller and NAME_demo).
	Name string
	// Root is the repository root; deploy/stack.yml is read from there.
	Root string
	// Port is the demo page's published port.
	Port int
	// Env are more stack variables (LEASE_TTL_MS=…), as NAME=VALUE.
	Env []string
}

// docker runs the docker CLI against DOCKER_HOST with extra environment and returns stdout.
func docker(ctx context.Context, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// socketPath is the daemon's own socket path from DOCKER_HOST (default the standard one): the
// controllers mount it to reach the Swarm API.
func socketPath() (string, error) {
	host := os.Getenv("DOCKER_HOST")
	if host == "" {
		return "/var/run/docker.sock", nil
	}
	if p, ok := strings.CutPrefix(host, "unix://"); ok {
		return p, nil
	}
	return "", fmt.Errorf("DOCKER_HOST=%s: the demo's controllers mount the engine's socket, so DOCKER_HOST must be unix:///path/to/docker.sock on this machine", host)
}

// FindRoot is the repository root above dir: the directory holding go.work.
func FindRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no go.work above " + dir + ": run this inside the repository")
		}
	}
}
