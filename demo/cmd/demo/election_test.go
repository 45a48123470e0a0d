package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// election is a real controller: `lfp-swarm-lease serve` on a file store of the test's, serving
// one election's /v1/state and /v1/events, as the stack's controllers do.
type election struct {
	// store and ns are the election's store (file://DIR) and namespace.
	store, ns string
	// url is the controller's address (http://127.0.0.1:PORT).
	url string
	// controller is the controller's process.
	controller *os.Process
}

var controllerListening = regexp.MustCompile(`msg=listening addr=(\S+)`)

// startElection starts a controller that reads the store every pollMs (100 by default), and
// returns once it listens; the test's end stops it.
func startElection(t *testing.T, pollMs ...string) *election {
	t.Helper()
	poll := "100"
	if len(pollMs) > 0 {
		poll = pollMs[0]
	}
	e := &election{store: "file://" + t.TempDir(), ns: "demo-test"}
	cmd := exec.Command(leaseBin, "serve", "--store", e.store, "--namespace", e.ns, "--listen", "127.0.0.1:0", "--default-poll-ms", poll)
	out := &syncBuffer{}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGCONT); cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	waitFor(t, "the controller listens", func() bool { return controllerListening.MatchString(out.String()) })
	e.url = "http://" + controllerListening.FindStringSubmatch(out.String())[1]
	e.controller = cmd.Process
	return e
}

// newTerm starts a new term of holder (`lfp-swarm-lease try-acquire`, a lease of a minute) and
// returns its fence. The test process is the caller of every term (--caller-pid): a new term of
// the holder that holds the lease starts at once.
func (e *election) newTerm(t *testing.T, holder string) uint64 {
	t.Helper()
	out, err := exec.Command(leaseBin, "try-acquire", "--store", e.store, "--namespace", e.ns, "--holder-id", holder, "--ttl-ms", "60000",
		"--caller-pid", strconv.Itoa(os.Getpid())).Output()
	fence, perr := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
	if err != nil || perr != nil {
		t.Fatalf("try-acquire as %s: %v %v: %q", holder, err, perr, out)
	}
	return fence
}

// release ends holder's term of fence (`lfp-swarm-lease release`): the election is vacant.
func (e *election) release(t *testing.T, holder string, fence uint64) {
	t.Helper()
	if out, err := exec.Command(leaseBin, "release", strconv.FormatUint(fence, 10), "--store", e.store, "--namespace", e.ns, "--holder-id", holder).CombinedOutput(); err != nil {
		t.Fatalf("release %d as %s: %v\n%s", fence, holder, err, out)
	}
}

// run starts `lfp-swarm-lease run -- demo worker` as holder: its worker writes to ledgerURL
// every second from the moment its term starts.
func (e *election) run(t *testing.T, holder, ledgerURL string) *syncBuffer {
	t.Helper()
	cmd := exec.Command(leaseBin, "run", "--store", e.store, "--namespace", e.ns, "--holder-id", holder, "--ttl-ms", "3000",
		"--shutdown-timeout-ms", "500", "--listen", "off", "--", demoBin, "worker")
	cmd.Env = []string{"DEMO_LEDGER_URL=" + ledgerURL, "DEMO_WRITE_INTERVAL_MS=1000"}
	out := &syncBuffer{}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return out
}
