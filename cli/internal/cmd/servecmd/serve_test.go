package servecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
)

// lockedBuffer is a log the test reads while serve writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestServeLogsItsShutdown: serve logs in the format asked for and, on shutdown, says it stopped.
func TestServeLogsItsShutdown(t *testing.T) {
	var log lockedBuffer
	opts := &Options{IO: cmdutil.IOStreams{Out: &bytes.Buffer{}, Err: &log}, Log: cmdutil.LogOptions{Format: "json"},
		Config: func() (*config.Config, error) {
			return config.Loader{NamespaceOptional: true, NoHolderID: true,
				Environ: func() []string { return []string{"SWARM_LEASE_STORE=memory", "SWARM_LEASE_LISTEN=127.0.0.1:0"} }}.Load(context.Background())
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveRun(ctx, opts) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), `"msg":"listening"`) {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not listen:\n%s", log.String())
		}
		time.Sleep(5 * time.Millisecond) // polling the log, bounded by the deadline
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	var last map[string]any
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last["msg"] != "stopped" {
		t.Fatalf("last line %q (%v), want stopped", lines[len(lines)-1], err)
	}
}
