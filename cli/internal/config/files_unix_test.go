//go:build unix

package config_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
)

// A _FILE naming what settings.ReadFile refuses is an error naming the variable, the file, what
// is wrong and what to do, with every such variable reported at once. (/dev/zero and huge files
// are left to the process tests in e2e, which cap the memory a regression could take.)
func TestFileVariantRefusesWhatIsNotASmallRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte("s3cr3t"+strings.Repeat("x", 64<<10)), 0o600); err != nil {
		t.Fatal(err)
	}
	l := config.Loader{Environ: env("SWARM_LEASE_NAMESPACE_FILE="+dir, "SWARM_LEASE_HOLDER_ID_FILE="+fifo,
		"SWARM_LEASE_NODE_ID_FILE="+big, "SWARM_LEASE_STORE=memory")}
	done := make(chan error, 1)
	go func() {
		_, err := l.Load(context.Background())
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Load still blocked after 10 s on a _FILE naming a named pipe")
	}
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		dir + " (named by SWARM_LEASE_NAMESPACE_FILE) is a directory, not a regular file: use a regular file",
		fifo + " (named by SWARM_LEASE_HOLDER_ID_FILE) is a named pipe (FIFO), not a regular file: use a regular file",
		big + " (named by SWARM_LEASE_NODE_ID_FILE) is larger than 64 KiB: use a file of at most 64 KiB",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("error %q quotes a file", err)
	}
}
