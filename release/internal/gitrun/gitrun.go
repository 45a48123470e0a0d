// Package gitrun runs git commands in one repository. Commands take it as an interface so that
// a test can record or refuse what they run; the implementation here runs the real git.
package gitrun

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Runner runs git with args in a repository and returns its standard output with the trailing
// newline removed.
type Runner interface {
	Git(ctx context.Context, args ...string) (string, error)
}

// Exec runs the git binary found on PATH.
type Exec struct {
	// Dir is the repository's work tree.
	Dir string
}

// Git runs git with args in r.Dir. The error carries the command and git's standard error,
// which is where git explains itself.
func (r Exec) Git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = r.Dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimRight(stdout.String(), "\n"), nil
}
