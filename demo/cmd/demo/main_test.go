package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/demo/internal/serve"
	"github.com/regbo/lfp-swarm-lease/demo/internal/timeline"
	"github.com/regbo/lfp-swarm-lease/demo/ledger"
)

// demoBin is the demo binary and leaseBin lfp-swarm-lease (the controllers), built once for the
// process tests.
var demoBin, leaseBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "demo-bin-")
	if err != nil {
		panic(err)
	}
	demoBin, leaseBin = filepath.Join(dir, "demo"), filepath.Join(dir, "lfp-swarm-lease")
	for _, b := range []struct{ out, dir, pkg string }{{demoBin, ".", "."}, {leaseBin, "../../../cli", "./cmd/lfp-swarm-lease"}} {
		cmd := exec.Command("go", "build", "-o", b.out, b.pkg)
		cmd.Dir = b.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			panic("go build " + b.pkg + ": " + err.Error() + "\n" + string(out))
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// ledgerServer is a real demo serve write address over a fresh ledger, checking fences against
// a real election that has issued a term (so every fence up to that term's passes the check).
func ledgerServer(t *testing.T) (*ledger.Ledger, *httptest.Server) {
	t.Helper()
	e := startElection(t)
	e.newTerm(t, "leader")
	tl := timeline.New()
	ctx, cancel := context.WithCancel(context.Background())
	following := make(chan struct{})
	log := slog.New(slog.DiscardHandler)
	go func() { defer close(following); tl.Follow(ctx, e.url, http.DefaultTransport, log) }()
	l, err := ledger.Open(t.TempDir(), tl)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(serve.WriteHandler(l, log))
	t.Cleanup(func() { srv.Close(); cancel(); <-following; l.Close() })
	return l, srv
}

func startWorker(t *testing.T, ledgerURL, fence string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	return startWorkerEvery(t, ledgerURL, fence, "50")
}

// startWorkerEvery starts a worker writing every intervalMs milliseconds.
func startWorkerEvery(t *testing.T, ledgerURL, fence, intervalMs string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(demoBin, "worker", "--ledger", ledgerURL, "--interval-ms", intervalMs)
	cmd.Env = []string{"SWARM_LEASE_FENCE=" + fence, "SWARM_LEASE_HOLDER_ID=h1", "SWARM_LEASE_NODE_ID=n1", "SWARM_LEASE_TASK_ID=t1"}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, stderr
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(10 * time.Millisecond) // the poll interval, not a synchronisation
	}
}

func TestWorkerWritesItsFenceAndStopsOnSIGTERM(t *testing.T) {
	l, srv := ledgerServer(t)
	cmd, stderr := startWorker(t, srv.URL, "42")
	waitFor(t, "two accepted writes with fence 42", func() bool {
		s := l.Snapshot()
		return s.Counts.Accepted >= 2 && s.Highest == 42 && s.Accepted[0].Task == "t1"
	})
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("worker after SIGTERM: %v\n%s", err, stderr)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the worker did not stop within 5 s of SIGTERM")
	}
	if !strings.Contains(stderr.String(), "worker stopped") {
		t.Fatalf("no clean stop logged:\n%s", stderr)
	}
}

// TestWorkerKeepsItsStaleFence: a worker started with a fence below the ledger's highest keeps
// writing with it, and every write is rejected — the ledger decides, not the worker.
func TestWorkerKeepsItsStaleFence(t *testing.T) {
	l, srv := ledgerServer(t)
	if _, err := l.Append(context.Background(), ledger.Write{Fence: 100, Holder: "newer"}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, srv.URL, "42")
	waitFor(t, "three rejected writes with fence 42", func() bool {
		s := l.Snapshot()
		return s.Counts.Rejected >= 3 && s.Rejected[0].Fence == 42 && s.Counts.Accepted == 1
	})
}

func TestWorkerWithoutFenceIsAUsageError(t *testing.T) {
	cmd := exec.Command(demoBin, "worker")
	cmd.Env = []string{"SWARM_LEASE_HOLDER_ID=h1"}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "SWARM_LEASE_FENCE") {
		t.Fatalf("exit %v, output %q: want exit 2 naming SWARM_LEASE_FENCE", err, out)
	}
}
