// Package gitrun runs git commands in one repository. Commands take it as an interface so that
// a test can record or refuse what they run; the implementation here runs the real git.
package gitrun

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/bounded"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/childenv"
	"github.com/regbo/lfp-swarm-lease/settings"
)

// maxStdout and maxStderr bound what is kept of git's output.
const (
	maxStdout = 1 << 20
	maxStderr = 8 << 10
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
	// git runs hooks, credential helpers and aliases: none of them gets the deployer's secrets
	// (release, which runs it too, has none).
	cmd.Env = childenv.Environ()
	// Bounded: the commands run here answer in a line or a few, and a message needs git's
	// first words of explanation, not all of them.
	stdout, stderr := &bounded.Buffer{Limit: maxStdout}, &bounded.Buffer{Limit: maxStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	if stdout.Truncated() {
		return "", fmt.Errorf("git %s: the output is larger than %s, more than is read", strings.Join(args, " "), settings.Size(maxStdout))
	}
	return strings.TrimRight(stdout.Kept(), "\n"), nil
}
