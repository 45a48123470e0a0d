// Package testrepo builds throwaway git repositories for the release tooling's tests: a copy of
// this repository's version files (so the tests see the layout the real files have), committed,
// with a local bare repository as its upstream.
package testrepo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/release/internal/versionfiles"
)

// SourceRoot is the root of the repository the tests run in.
func SourceRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// CopyWorkTree copies the source repository's files that match pathspecs (all when none),
// tracked or new, as they are in the work tree, into dst, keeping their modes. Files deleted
// in the work tree and symbolic links are left out.
func CopyWorkTree(dst string, pathspecs ...string) error {
	src := SourceRoot()
	args := append([]string{"-C", src, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--"}, pathspecs...)
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f == "" {
			continue
		}
		info, err := os.Lstat(filepath.Join(src, f))
		if os.IsNotExist(err) {
			continue
		} else if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			continue
		}
		content, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, f)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, f), content, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// FixtureVersion is the version CopyVersionFiles sets, so that tests can name the versions
// they expect whatever version the repository is at.
const FixtureVersion = "0.1.0"

// CopyVersionFiles copies the version files of the source repository (tracked or new) into a
// new temporary directory, sets them to FixtureVersion and returns the directory.
func CopyVersionFiles(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := CopyWorkTree(dir, "package.json", "bun.lock", "go.work", "*go.mod", "*/package.json", "*pyproject.toml",
		"server/api.go", "clients/openapi.json"); err != nil {
		t.Fatal(err)
	}
	repo, err := versionfiles.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := repo.SetVersion(FixtureVersion)
	if err != nil {
		t.Fatal(err)
	}
	if err := versionfiles.Apply(dir, changes); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Git runs git in dir and fails the test on an error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), Env()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Env is the environment that makes git in a test independent of the machine's configuration.
func Env() []string {
	return []string{
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Release Test", "GIT_AUTHOR_EMAIL=release@example.invalid",
		"GIT_COMMITTER_NAME=Release Test", "GIT_COMMITTER_EMAIL=release@example.invalid",
	}
}

// WithUpstream turns dir into a git repository with one commit of its files on branch main,
// pushed to a new bare repository that is main's upstream (remote "origin"). It returns the
// bare repository's path.
func WithUpstream(t testing.TB, dir string) string {
	t.Helper()
	bare := t.TempDir()
	Git(t, bare, "init", "--quiet", "--bare", "--initial-branch=main")
	Git(t, dir, "init", "--quiet", "--initial-branch=main")
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "--quiet", "-m", "initial")
	Git(t, dir, "remote", "add", "origin", bare)
	Git(t, dir, "push", "--quiet", "-u", "origin", "main")
	return bare
}
