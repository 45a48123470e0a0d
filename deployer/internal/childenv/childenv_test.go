package childenv

import (
	"slices"
	"strings"
	"testing"
)

func TestEnvironDropsTheDeployersSettings(t *testing.T) {
	t.Setenv("SWARM_LEASE_DEPLOY_REGISTRY_TOKEN", "s3cret")
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_API_KEY_FILE", "/run/secrets/key")
	t.Setenv("CHILDENV_TEST_KEPT", "yes")
	env := Environ()
	for _, kv := range env {
		if strings.HasPrefix(kv, "SWARM_LEASE_DEPLOY_") {
			t.Errorf("%s reaches child processes", kv)
		}
	}
	if !slices.Contains(env, "CHILDENV_TEST_KEPT=yes") {
		t.Error("an unrelated variable was dropped")
	}
}
