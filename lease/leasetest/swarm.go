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
// CI=true, where a Swarm test that cannot run fails, so that CI never passes without it.
func SwarmHost(t testing.TB) string {
	t.Helper()
	host := os.Getenv(DockerHostEnv)
	if host != "" {
		return host
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not set and CI=true: the Swarm tests must run in CI (start one with scripts/test-swarm.sh start)", DockerHostEnv)
	}
	t.Skipf("%s is not set: skipping a test that needs a real Swarm (scripts/test-swarm.sh start)", DockerHostEnv)
	return ""
}
