package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// checkWait bounds the engine check: an engine that answers at all answers within it.
const checkWait = 10 * time.Second

// howToGetASwarm is the hint of every refusal of CheckManager.
const howToGetASwarm = "for a private single-node Swarm that leaves this machine's engine alone, run `scripts/test-swarm.sh start` " +
	"in the repository and `export DOCKER_HOST=unix:///tmp/lfp-swarm-test/docker.sock` as it prints; " +
	"or point DOCKER_HOST at a Swarm manager's socket"

// ErrNoManager is returned by CheckManager when DOCKER_HOST is not a reachable Swarm manager.
var ErrNoManager = errors.New("no Swarm manager")

// engineName says which engine DOCKER_HOST names.
func engineName() string {
	if host := os.Getenv("DOCKER_HOST"); host != "" {
		return "DOCKER_HOST=" + host
	}
	return "the default socket unix:///var/run/docker.sock (DOCKER_HOST is not set)"
}

// CheckManager makes sure, in seconds, that the engine at DOCKER_HOST answers and is a Swarm
// manager — before anything is built or removed — and otherwise says how to get one.
func CheckManager(ctx context.Context) error {
	if _, err := exec.LookPath("docker"); err != nil {
		return fmt.Errorf("%w: the docker CLI is not installed (Debian: apt-get install docker.io)", ErrNoManager)
	}
	ctx, cancel := context.WithTimeout(ctx, checkWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}} {{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	fields := strings.Fields(stdout.String())
	if runErr != nil || len(fields) != 3 || fields[0] == "" {
		why, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if ctx.Err() != nil {
			why = fmt.Sprintf("no answer within %v", checkWait)
		} else if why == "" && runErr != nil {
			why = runErr.Error()
		}
		return fmt.Errorf("%w: no Docker engine answers at %s (%s): %s", ErrNoManager, engineName(), why, howToGetASwarm)
	}
	if state, manager := fields[1], fields[2]; manager != "true" {
		what := "is in no Swarm"
		if state == "active" {
			what = "is a Swarm worker"
		} else if state != "inactive" {
			what = "is in Swarm state " + state
		}
		return fmt.Errorf("%w: the Docker engine at %s %s: it is not a Swarm manager; make it one with `docker swarm init` (a single node is enough), or %s",
			ErrNoManager, engineName(), what, howToGetASwarm)
	}
	return nil
}
