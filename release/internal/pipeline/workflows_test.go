package pipeline

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/release/internal/testrepo"
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

// The Python package goes to PyPI by trusted publishing: a job of its own with the OIDC token,
// behind PUBLISH_PYPI (a manual run's publish_pypi input), and no PyPI token anywhere. Its
// wheels carry the release's own binaries: the release job hands its archives and checksums to
// it, and refuses BUILD_ARM=false with PyPI on before it publishes anything.
func TestReleaseWorkflowPublishesToPyPIByTrustedPublishing(t *testing.T) {
	content := readFile(t, ".github/workflows/release.yml")
	_, job, found := strings.Cut(content, "\n  pypi:\n")
	if !found {
		t.Fatal("release.yml has no pypi job")
	}
	for _, want := range []string{"needs: release", "inputs.publish_pypi || vars.PUBLISH_PYPI", "id-token: write",
		"environment: release", "pypa/gh-action-pypi-publish@", "packages-dir: clients/python/dist/",
		"actions/download-artifact@", "name: wheel-binaries", "scripts/build-wheels.sh --from-release"} {
		if !strings.Contains(job, want) {
			t.Errorf("the pypi job lacks %q", want)
		}
	}
	releaseJob, _, _ := strings.Cut(content, "\n  pypi:\n")
	for _, want := range []string{"actions/upload-artifact@", "name: wheel-binaries", "dist/checksums.txt",
		"dist/lfp-swarm-lease_*_linux_*.tar.gz", "dist/lfp-swarm-lease_*_darwin_*.tar.gz",
		"env.PUBLISH_PYPI == 'true' && env.BUILD_ARM == 'false'"} {
		if !strings.Contains(releaseJob, want) {
			t.Errorf("the release job lacks %q", want)
		}
	}
	if !strings.Contains(content, "publish_pypi:") {
		t.Error("a manual run has no publish_pypi input")
	}
	for _, token := range []string{"secrets.pypi", "pypi_token", "pypi_api_token"} {
		if strings.Contains(strings.ToLower(content), token) {
			t.Errorf("release.yml mentions %q: trusted publishing needs no token", token)
		}
	}
	if strings.Contains(job, "password:") || strings.Contains(job, "secrets.") {
		t.Error("the pypi job passes a secret: trusted publishing needs none")
	}
	// Only the PyPI job may ask for an OIDC token.
	if strings.Count(content, "id-token: write") != 1 {
		t.Error("id-token: write must be granted to the pypi job only")
	}
}
