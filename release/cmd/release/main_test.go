package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// outside runs the built `release ARGS…` in a directory that is in no git work tree and
// returns its exit code and standard error.
func outside(t *testing.T, binary string, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	// git looks no further up than the directory's parent, whatever /tmp is on this machine.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir)}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// Outside a git work tree the commands say that they need the repository; help works anywhere.
// A command line the binary does not take exits 2.
func TestOutsideTheRepository(t *testing.T) {
	binary := filepath.Join(t.TempDir(), "release")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if code, stdout, stderr := outside(t, binary, "--help"); code != 0 || !strings.Contains(stdout, "verify-version") {
		t.Errorf("release --help outside git: exit %d, want 0 with the commands\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, args := range [][]string{{"cut", "--dry-run"}, {"verify-version", "v0.1.0"}} {
		if code, _, stderr := outside(t, binary, args...); code != 1 || !strings.Contains(stderr, "inside the repository's work tree") {
			t.Errorf("release %s outside git: exit %d, want 1 saying it needs the repository\nstderr: %s", strings.Join(args, " "), code, stderr)
		}
	}
	for _, args := range [][]string{{"cut", "--bogus"}, {"verify-version"}, {"cutt"}} {
		if code, _, stderr := outside(t, binary, args...); code != 2 {
			t.Errorf("release %s: exit %d, want 2 (usage)\nstderr: %s", strings.Join(args, " "), code, stderr)
		}
	}
}
