package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// syncBuffer is a buffer safe for the process's writes and the test's reads.
type syncBuffer = leasetest.SyncBuffer

// serveProc is a real `demo serve` process.
type serveProc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	// base is its page's address (http://127.0.0.1:PORT).
	base string
	// writes is its write address (http://127.0.0.1:PORT).
	writes string
	done   chan struct{}
}

var listeningRE = regexp.MustCompile(`msg=listening addr=(\S+) write_addr=(\S+)`)

// startServeCmd starts `demo serve` on dir with free ports and the extra arguments, and returns
// once it listens, or once it exited (then base is empty).
func startServeCmd(t *testing.T, dir string, cmd *exec.Cmd) *serveProc {
	t.Helper()
	p := &serveProc{cmd: cmd, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.stop(syscall.SIGKILL) })
	deadline := time.After(10 * time.Second)
	for {
		if m := listeningRE.FindStringSubmatch(p.stderr.String()); m != nil {
			p.base, p.writes = "http://"+m[1], "http://"+m[2]
			return p
		}
		select {
		case <-p.done:
			return p
		case <-deadline:
			t.Fatalf("demo serve neither listened nor exited within 10 s:\n%s", p.stderr)
		case <-time.After(10 * time.Millisecond): // the poll interval, not a synchronisation
		}
	}
}

// serveCommand is `demo serve` on dir and free ports; its controller, unless args name one
// (--controller), is an address where nothing listens.
func serveCommand(dir string, args ...string) *exec.Cmd {
	return exec.Command(demoBin, append([]string{"serve", "--listen", "127.0.0.1:0", "--write-listen", "127.0.0.1:0",
		"--data", dir, "--controller", "http://127.0.0.1:1"}, args...)...)
}

func startServe(t *testing.T, dir string, args ...string) *serveProc {
	t.Helper()
	p := startServeCmd(t, dir, serveCommand(dir, args...))
	if p.base == "" {
		t.Fatalf("demo serve exited before it listened:\n%s", p.stderr)
	}
	return p
}

// stop signals the process and waits for its exit.
func (p *serveProc) stop(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(sig)
	<-p.done
}

// postWrite sends one write to base and returns the status.
func postWrite(t *testing.T, base string, fence uint64, holder string) int {
	t.Helper()
	return postBody(t, base, fmt.Sprintf(`{"fence":%d,"holder":%q}`, fence, holder))
}

// postBody posts body as a write to base and returns the status.
func postBody(t *testing.T, base, body string) int {
	t.Helper()
	resp, err := http.Post(base+"/api/ledger/entries", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestSecondServeOnOneDataDirRefuses: a second `demo serve` on a data directory in use exits
// at once naming the first one, which goes on; its acknowledged writes are kept across a
// restart, so a fence below them is refused.
func TestSecondServeOnOneDataDirRefuses(t *testing.T) {
	dir := t.TempDir()
	e := startElection(t)
	e.newTerm(t, "a")
	a := startServe(t, dir, "--controller", e.url)
	if got := postWrite(t, a.writes, 10, "a"); got != http.StatusCreated {
		t.Fatalf("write to the first server: %d", got)
	}
	b := startServeCmd(t, dir, serveCommand(dir))
	if b.base != "" {
		t.Fatalf("a second demo serve started on the data directory the first one uses:\n%s", b.stderr)
	}
	want := fmt.Sprintf("pid %d", a.cmd.Process.Pid)
	if code := b.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(b.stderr.String(), want) || !strings.Contains(b.stderr.String(), "in use") {
		t.Fatalf("the second demo serve: exit %d, stderr:\n%s\nwant exit 1 and an error saying the ledger is in use by %s", code, b.stderr, want)
	}
	if got := postWrite(t, a.writes, 11, "a"); got != http.StatusCreated {
		t.Fatalf("write to the first server after the refused second one: %d", got)
	}
	a.stop(syscall.SIGTERM)
	a2 := startServe(t, dir, "--controller", e.url)
	if got := postWrite(t, a2.writes, 9, "old"); got != http.StatusConflict {
		t.Fatalf("a fence below the acknowledged ones after a restart: %d, want 409", got)
	}
}

// TestOnlyTheWriteAddressWrites: the page's address, the one the stack publishes, refuses
// writes — one from anyone with the largest fence there is would otherwise refuse every real
// leader's write from then on, also after a restart — and the write address refuses fences
// the election cannot issue.
func TestOnlyTheWriteAddressWrites(t *testing.T) {
	dir := t.TempDir()
	e := startElection(t)
	fence := e.newTerm(t, "leader")
	a := startServe(t, dir, "--controller", e.url)
	const poison = `{"fence":18446744073709551615,"holder":"anyone"}`
	if got := postBody(t, a.base, poison); got != http.StatusForbidden {
		t.Errorf("a write on the page's address: %d, want 403", got)
	}
	if got := postBody(t, a.base, `{"fence":1796303263919234,"holder":"leader"}`); got != http.StatusForbidden {
		t.Errorf("a leader's write on the page's address: %d, want 403", got)
	}
	if got := postBody(t, a.writes, poison); got != http.StatusBadRequest {
		t.Errorf("the largest uint64 fence on the write address: %d, want 400", got)
	}
	if got := postBody(t, a.writes, `{"fence":9007199254740992,"holder":"anyone"}`); got != http.StatusBadRequest {
		t.Errorf("fence 2^53 on the write address: %d, want 400", got)
	}
	a.stop(syscall.SIGTERM)
	a2 := startServe(t, dir, "--controller", e.url)
	if got := postWrite(t, a2.writes, fence, "leader"); got != http.StatusCreated {
		t.Errorf("a leader's write after the refused ones and a restart: %d, want 201", got)
	}
	resp, err := http.Get(a2.base + "/api/ledger")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var snap struct {
		Counts struct{ Accepted, Rejected int }
	}
	json.NewDecoder(resp.Body).Decode(&snap)
	if snap.Counts.Accepted != 1 || snap.Counts.Rejected != 0 {
		t.Errorf("the ledger recorded refused writes: %+v", snap.Counts)
	}
}
