//go:build unix

package config

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs load with a deadline: a read that blocks (on a named pipe) fails the test instead
// of hanging it.
func within(t *testing.T, load func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- load() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("still blocked after 10 s on a file naming a named pipe")
		return nil
	}
}

// Every file a setting names goes through settings.ReadFile: what it refuses is an *Error (exit
// 2) naming the variable or flag, the file, what is wrong and what to do.
func TestFileReadsFollowTheSettingsRule(t *testing.T) {
	clearEnvironment(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// /dev/zero and huge files are left to the process tests (cmd/deployer), which cap the
	// memory a regression could take.
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_API_KEY_FILE", dir)
	_, _, err := Load(Input{Dir: t.TempDir()})
	wantError(t, err, "SWARM_LEASE_DEPLOY_PORTAINER_API_KEY_FILE (from variable SWARM_LEASE_DEPLOY_PORTAINER_API_KEY_FILE): the file "+dir+" is a directory, not a regular file: use a regular file")
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_API_KEY_FILE", "")

	err = within(t, func() error { _, _, err := Load(Input{Dir: t.TempDir(), EnvFile: fifo}); return err })
	wantError(t, err, "config: --env-file: the file "+fifo+" is a named pipe (FIFO), not a regular file: use a regular file")
	big := filepath.Join(dir, "big.env")
	writeFile(t, big, "SWARM_LEASE_DEPLOY_STACK_NAME=s3cr3t\n"+strings.Repeat("#\n", 1<<19))
	_, _, err = Load(Input{Dir: t.TempDir(), EnvFile: big})
	wantError(t, err, "--env-file", "the file "+big+" is larger than 1 MiB")
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("error %q quotes the file", err)
	}
	// The repository's own .env, when it is there, is read by the same rule.
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".env"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, _, err = Load(Input{Dir: repo})
	wantError(t, err, "config: .env: the file "+filepath.Join(repo, ".env")+" is a directory, not a regular file")

	// The CA bundle is read by the Portainer client; Connect names its setting.
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_URL", "https://portainer.example:9443")
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_API_KEY", "ptr_key")
	t.Setenv("SWARM_LEASE_DEPLOY_ENDPOINT", "1")
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_CA_FILE", fifo)
	err = within(t, func() error { _, _, err := Connect(Input{Dir: t.TempDir()}, io.Discard); return err })
	wantError(t, err, "SWARM_LEASE_DEPLOY_PORTAINER_CA_FILE (from variable SWARM_LEASE_DEPLOY_PORTAINER_CA_FILE): the file "+fifo+" is a named pipe (FIFO), not a regular file")
}
