package pipeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/release/internal/testrepo"
)

// releaseTool returns the path of a pinned release tool, installed by scripts/release-tools.sh
// (once per version; goreleaser takes minutes the first time).
func releaseTool(t *testing.T, name string) string {
	t.Helper()
	leasetest.Long(t, "runs a pinned release tool, built on first use")
	root := testrepo.SourceRoot()
	cmd := exec.Command(filepath.Join(root, "scripts", "release-tools.sh"), name)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/release-tools.sh %s: %v", name, err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), name)
}

// requireCommand returns the path of a command from the machine, which fails the test under
// CI=true when it is missing (.ci/run installs it) and skips it otherwise.
func requireCommand(t *testing.T, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed and CI=true: %s", name, install)
	}
	t.Skipf("%s is not installed (%s); CI=true makes this a failure", name, install)
	return ""
}
