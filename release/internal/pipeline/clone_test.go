package pipeline

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/release/internal/testrepo"
	"github.com/regbo/lfp-swarm-lease/release/internal/versionfiles"
)

// throwawayVersion is the version of the throwaway release: never a real one.
const throwawayVersion = "0.99.0"

var scratch string // removed when the tests end

func TestMain(m *testing.M) {
	var err error
	if scratch, err = os.MkdirTemp("", "release-pipeline-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(scratch)
	os.Exit(code)
}

var (
	cloneOnce sync.Once
	cloneDir  string
	cloneErr  error
)

// taggedClone returns a temporary clone of this repository with the work tree's current files
// (committed or not), the version files at throwawayVersion, committed and tagged the way
// `bun run release` tags (vX.Y.Z and DIR/vX.Y.Z per Go module), and a remote configured
// (goreleaser reads the version as 0.0.0-SNAPSHOT without one). It is made once per test
// binary and shared; tests must not change it.
func taggedClone(t *testing.T) string {
	t.Helper()
	leasetest.Long(t, "makes a throwaway release in a clone of the repository and builds from it")
	cloneOnce.Do(func() { cloneDir, cloneErr = makeTaggedClone() })
	if cloneErr != nil {
		t.Fatalf("the throwaway release clone: %v", cloneErr)
	}
	return cloneDir
}

func makeTaggedClone() (string, error) {
	src := testrepo.SourceRoot()
	dir := filepath.Join(scratch, "clone")
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), testrepo.Env()...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out)), nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if _, err := git("clone", "--quiet", "--no-local", src, "."); err != nil {
		return "", err
	}
	// The work tree's files, so the test checks what is about to be committed, too.
	if err := testrepo.CopyWorkTree(dir); err != nil {
		return "", err
	}
	repo, err := versionfiles.Open(dir)
	if err != nil {
		return "", err
	}
	changes, err := repo.SetVersion(throwawayVersion)
	if err != nil {
		return "", err
	}
	if err := versionfiles.Apply(dir, changes); err != nil {
		return "", err
	}
	if _, err := git("add", "-A"); err != nil {
		return "", err
	}
	if _, err := git("commit", "--quiet", "--allow-empty", "-m", "Release v"+throwawayVersion); err != nil {
		return "", err
	}
	for _, prefix := range repo.ModuleTagPrefixes() {
		if _, err := git("tag", "-a", "-m", "throwaway", prefix+"v"+throwawayVersion); err != nil {
			return "", err
		}
	}
	if _, err := git("tag", "-a", "-m", "throwaway", "v"+throwawayVersion); err != nil {
		return "", err
	}
	if _, err := git("remote", "set-url", "origin", "https://example.invalid/regbo/lfp-swarm-lease.git"); err != nil {
		return "", err
	}
	return dir, nil
}
