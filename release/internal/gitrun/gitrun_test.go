package gitrun

import (
	"context"
	"strings"
	"testing"
)

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
