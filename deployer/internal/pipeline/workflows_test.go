package pipeline

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/testrepo"
)

// Every workflow passes actionlint, including shellcheck on its run: blocks.
func TestWorkflowsPassActionlint(t *testing.T) {
	shellcheck := requireCommand(t, "shellcheck", "apt-get install shellcheck")
	cmd := exec.Command(releaseTool(t, "actionlint"), "-shellcheck", shellcheck)
	cmd.Dir = testrepo.SourceRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("actionlint: %v\n%s", err, out)
	}
}

// The release workflow has the switches and secrets the README names and nothing of the
// deployment.
func TestReleaseWorkflowHasNoDeploymentSecrets(t *testing.T) {
	content := readFile(t, ".github/workflows/release.yml")
	for _, want := range []string{"tags: [\"v*\"]", "workflow_dispatch", "vars.BUILD_ARM", "vars.PUBLISH_NPM", "vars.CONTAINER_NAMESPACE",
		"secrets.NPM_TOKEN", "secrets.CONTAINER_REGISTRY_USERNAME", "secrets.CONTAINER_REGISTRY_TOKEN", "environment: release", "scripts/verify-release-version.sh", "images/cmd/publish"} {
		if !strings.Contains(content, want) {
			t.Errorf("release.yml lacks %q", want)
		}
	}
	if strings.Contains(strings.ToLower(content), "portainer") {
		t.Error("release.yml mentions Portainer: release CI never deploys")
	}
}
