package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/demo/internal/serve"
	"github.com/regbo/lfp-swarm-lease/demo/ledger"
)

// answer posts a write to base and returns the status, the answer and how long it took.
func answer(t *testing.T, base string, fence uint64, holder string) (int, serve.WriteAnswer, time.Duration) {
	t.Helper()
	start := time.Now()
	resp, err := http.Post(base+"/api/ledger/entries", "application/json", strings.NewReader(fmt.Sprintf(`{"fence":%d,"holder":%q}`, fence, holder)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a serve.WriteAnswer
	json.NewDecoder(resp.Body).Decode(&a)
	return resp.StatusCode, a, time.Since(start)
}

// snapshot reads the ledger's snapshot from the page's address base.
func snapshot(t *testing.T, base string) ledger.Snapshot {
	t.Helper()
	resp, err := http.Get(base + "/api/ledger")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s ledger.Snapshot
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAFenceNoLeaderMadeCannotLockTheLedger replays the attack on a ledger that took any fence
// up to 2^53-1: a write of fence 5 accepted, then an anonymous write of 2^53-1 — once accepted,
// every later leader's write was refused as stale, also after a restart. Against a real
// controller, 2^53-1 is refused as not issued (recorded, the floor unchanged), the leader's
// next term is accepted the moment it starts (before the ledger has seen it), and so is the one
// after a restart of demo serve.
func TestAFenceNoLeaderMadeCannotLockTheLedger(t *testing.T) {
	dir := t.TempDir()
	e := startElection(t)
	first := e.newTerm(t, "leader")
	a := startServe(t, dir, "--controller", e.url)
	if status, got, _ := answer(t, a.writes, 5, "leader"); status != http.StatusCreated {
		t.Fatalf("fence 5 (below the election's %d): %d %+v, want 201", first, status, got)
	}
	status, got, took := answer(t, a.writes, ledger.MaxFence, "anonymous")
	if status != http.StatusUnprocessableEntity || got.Code != "fence_not_issued" || got.Entry == nil || got.Entry.Reason != ledger.NotIssued || got.Entry.Issued != first {
		t.Fatalf("fence 2^53-1 from no leader: %d %+v, want 422 fence_not_issued recorded with the election's %d", status, got, first)
	}
	t.Logf("2^53-1 refused as not issued after %v", took.Round(time.Millisecond))
	next := e.newTerm(t, "leader")
	if status, got, _ := answer(t, a.writes, next, "leader"); status != http.StatusCreated {
		t.Fatalf("the leader's next term %d, written as it starts: %d %+v, want 201", next, status, got)
	}
	a.stop(syscall.SIGTERM)
	a2 := startServe(t, dir, "--controller", e.url)
	if status, got, _ := answer(t, a2.writes, next, "leader"); status != http.StatusCreated {
		t.Fatalf("the leader's fence %d after a restart: %d %+v, want 201", next, status, got)
	}
	last := e.newTerm(t, "leader")
	if status, got, _ := answer(t, a2.writes, last, "leader"); status != http.StatusCreated {
		t.Fatalf("a new term %d after a restart: %d %+v, want 201", last, status, got)
	}
	s := snapshot(t, a2.base)
	if s.Highest != last || s.Counts != (ledger.Counts{Accepted: 4, Rejected: 1, NotIssued: 1}) || s.Rejected[0].Fence != ledger.MaxFence {
		t.Fatalf("the ledger: highest %d, counts %+v, rejected %+v; want %d, 4 accepted and 2^53-1 rejected as not issued", s.Highest, s.Counts, s.Rejected, last)
	}
}

// TestANewLeadersFirstWriteIsAccepted: `lfp-swarm-lease run -- demo worker` wins a term and its
// worker writes at once, while the controller demo serve follows is frozen (SIGSTOP) and so
// cannot have shown the term: the ledger, unable to tell, records nothing; once the controller
// answers again it learns the term and accepts the worker's write — a legitimate leader is
// never refused as not issued.
func TestANewLeadersFirstWriteIsAccepted(t *testing.T) {
	e := startElection(t, "1000")
	// The election's first term, which demo serve will know, ended: the election is vacant.
	e.release(t, "earlier", e.newTerm(t, "earlier"))
	a := startServe(t, t.TempDir(), "--controller", e.url)
	waitFor(t, "demo serve knows the first term", func() bool {
		status, _, _ := answer(t, a.writes, 1, "probe") // any fence up to the first term's
		return status == http.StatusCreated
	})
	e.controller.Signal(syscall.SIGSTOP)
	worker := e.run(t, "winner", a.writes)
	waitFor(t, "the new leader's worker writes and gets no answer", func() bool { return strings.Contains(worker.String(), "ledger unreachable") })
	e.controller.Signal(syscall.SIGCONT)
	thawed := time.Now()
	var s ledger.Snapshot
	waitFor(t, "the new leader's first write", func() bool {
		s = snapshot(t, a.base)
		return s.Highest > 1
	})
	if s.Counts.Rejected != 0 || s.Accepted[0].Holder != "winner" || s.Accepted[0].ReceivedAt.Before(thawed) {
		t.Fatalf("the ledger: %+v, want the winner's write accepted once the controller answered, and nothing rejected\nrun:\n%s", s, worker)
	}
	t.Logf("the new leader's write was accepted %v after the controller answered again", s.Accepted[0].ReceivedAt.Sub(thawed).Round(time.Millisecond))
}

// TestTheLedgerSaysWhenItCannotReachTheController: with no controller to ask, a write the
// ledger cannot check is answered 503 controller_unreachable with Retry-After, within the
// ledger's bounded wait, and nothing is recorded.
func TestTheLedgerSaysWhenItCannotReachTheController(t *testing.T) {
	a := startServe(t, t.TempDir()) // its controller: an address where nothing listens
	start := time.Now()
	resp, err := http.Post(a.writes+"/api/ledger/entries", "application/json", strings.NewReader(`{"fence":5,"holder":"leader"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	took := time.Since(start)
	var got serve.WriteAnswer
	json.NewDecoder(resp.Body).Decode(&got)
	if resp.StatusCode != http.StatusServiceUnavailable || got.Code != "controller_unreachable" || resp.Header.Get("Retry-After") == "" || got.Entry != nil {
		t.Fatalf("%s %+v (Retry-After %q), want 503 controller_unreachable with Retry-After", resp.Status, got, resp.Header.Get("Retry-After"))
	}
	if took > 5*time.Second {
		t.Fatalf("the answer took %v, want the ledger's bounded wait (3 s)", took)
	}
	if s := snapshot(t, a.base); s.Counts != (ledger.Counts{}) {
		t.Fatalf("an unchecked write was recorded: %+v", s.Counts)
	}
}
