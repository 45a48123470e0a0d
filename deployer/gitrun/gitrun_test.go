package gitrun

import (
	"context"
	"strings"
	"testing"
)

// TestGitGetsNoDeployerSettings runs the real git, whose shell alias prints the environment
// that git and everything it starts (hooks, credential helpers) get.
func TestGitGetsNoDeployerSettings(t *testing.T) {
	t.Setenv("SWARM_LEASE_DEPLOY_REGISTRY_TOKEN", "s3cret-token")
	t.Setenv("GITRUN_TEST_KEPT", "yes")
	out, err := Exec{Dir: t.TempDir()}.Git(context.Background(), "-c", "alias.showenv=!env", "showenv")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "SWARM_LEASE_DEPLOY_") || strings.Contains(out, "s3cret-token") {
		t.Errorf("git's environment holds the deployer's settings:\n%s", out)
	}
	if !strings.Contains(out, "GITRUN_TEST_KEPT=yes") {
		t.Errorf("git's environment lost an unrelated variable:\n%s", out)
	}
}

// TestGitOutputIsBounded has git print more than is kept.
func TestGitOutputIsBounded(t *testing.T) {
	_, err := Exec{Dir: t.TempDir()}.Git(context.Background(), "-c", "alias.flood=!head -c 2000000 /dev/zero", "flood")
	if err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Errorf("error %v, want one naming the 1 MiB limit", err)
	}
}

func TestGitReturnsTheOutputWithoutTheNewline(t *testing.T) {
	dir := t.TempDir()
	out, err := Exec{Dir: dir}.Git(context.Background(), "-c", "alias.hello=!echo hello", "hello")
	if err != nil || out != "hello" {
		t.Fatalf("git hello = %q, %v; want \"hello\"", out, err)
	}
}

func TestGitErrorsCarryTheCommandAndGitsExplanation(t *testing.T) {
	_, err := Exec{Dir: t.TempDir()}.Git(context.Background(), "rev-parse", "--verify", "no-such-ref")
	if err == nil || !strings.Contains(err.Error(), "git rev-parse --verify no-such-ref") || !strings.Contains(err.Error(), "fatal:") {
		t.Fatalf("err = %v, want the command and git's fatal: message", err)
	}
}
