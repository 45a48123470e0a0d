package leasetest

import (
	"os"
	"testing"
)

// DockerHostEnv names the variable that points the tests at a Swarm manager reserved for tests,
// e.g. unix:///tmp/lfp-swarm-test/docker.sock (scripts/test-swarm.sh start prints it). The tests
// create and remove services there.
const DockerHostEnv = "SWARM_LEASE_TEST_DOCKER_HOST"

// SwarmHost returns the test Swarm's Docker host. Without one the test is skipped — except when
// CI=true, where a Swarm test that cannot run fails, so that CI never passes without it. Under
// -short (the fast lane) it is skipped too, as a Long test.
func SwarmHost(t testing.TB) string {
	t.Helper()
	return hostFrom(t, DockerHostEnv)
}

func hostFrom(t testing.TB, variable string) string {
	t.Helper()
	Long(t, "needs a Docker engine")
	host := os.Getenv(variable)
	if host != "" {
		return host
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not set and CI=true: the Docker tests must run in CI (scripts/test.sh starts the engines)", variable)
	}
	t.Skipf("%s is not set: skipping a test that needs a real Docker engine (scripts/test-swarm.sh start; see README)", variable)
	return ""
}

// PlainDockerHostEnv names the variable that points the tests at a Docker engine that is in no
// Swarm (scripts/test-swarm.sh starts one beside the Swarm), for "not a swarm manager" tests.
const PlainDockerHostEnv = "SWARM_LEASE_TEST_PLAIN_DOCKER_HOST"

// PlainDockerHost returns the engine that is in no Swarm, with SwarmHost's skip/fail rules.
func PlainDockerHost(t testing.TB) string {
	t.Helper()
	return hostFrom(t, PlainDockerHostEnv)
}
