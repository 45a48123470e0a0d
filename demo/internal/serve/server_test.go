package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/demo/internal/controllers"
	"github.com/regbo/lfp-swarm-lease/demo/internal/timeline"
	"github.com/regbo/lfp-swarm-lease/demo/ledger"
)

// issuedUpTo is an election that has issued every fence up to its value (the tests of the real
// election's check run real controllers: demo/cmd/demo).
type issuedUpTo uint64

func (i issuedUpTo) Issued(context.Context, uint64) (uint64, error) { return uint64(i), nil }

// unreadable is an election whose controllers cannot be reached.
type unreadable struct{}

func (unreadable) Issued(context.Context, uint64) (uint64, error) {
	return 0, fmt.Errorf("%w: no controller", ledger.ErrElectionUnknown)
}

// newDemo serves a fresh ledger's page address and write address; the election has issued
// fences up to 100.
func newDemo(t *testing.T, controller string) (page, writes *httptest.Server) {
	t.Helper()
	return newDemoOf(t, controller, issuedUpTo(100))
}

// newDemoOf is newDemo with election.
func newDemoOf(t *testing.T, controller string, election ledger.Election) (page, writes *httptest.Server) {
	t.Helper()
	l, err := ledger.Open(t.TempDir(), election)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	h, err := Handler(l, timeline.New(), controller, controllers.NewTransport(nil), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	page = httptest.NewServer(h)
	t.Cleanup(page.Close)
	writes = httptest.NewServer(WriteHandler(l, slog.New(slog.DiscardHandler)))
	t.Cleanup(writes.Close)
	return page, writes
}

func post(t *testing.T, base, body string) int {
	t.Helper()
	resp, err := http.Post(base+"/api/ledger/entries", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestLedgerAPIAnswers(t *testing.T) {
	page, srv := newDemo(t, "http://127.0.0.1:1")
	for _, c := range []struct {
		body   string
		status int
	}{
		{`{"fence":5,"holder":"a"}`, http.StatusCreated},
		{`{"fence":7,"holder":"b"}`, http.StatusCreated},
		{`{"fence":5,"holder":"a"}`, http.StatusConflict},              // stale: recorded as rejected
		{`{"fence":101,"holder":"a"}`, http.StatusUnprocessableEntity}, // not issued: recorded as rejected
		{`{"fence":0,"holder":"a"}`, http.StatusBadRequest},
		{`{"fence":9007199254740992,"holder":"a"}`, http.StatusBadRequest}, // above 2^53-1
		{`{"fence":18446744073709551615,"holder":"a"}`, http.StatusBadRequest},
		{`{"fence":8,"holder":"a","extra":1}`, http.StatusBadRequest},
		{`not json`, http.StatusBadRequest},
		// One JSON write and nothing after it: trailing data is not a write to guess at.
		{`{"fence":8,"holder":"a"} garbage`, http.StatusBadRequest},
		{`{"fence":8,"holder":"a"}{"fence":9,"holder":"a"}`, http.StatusBadRequest},
		{`{"fence":8,"holder":"a"}]`, http.StatusBadRequest},
		{"{\"fence\":8,\"holder\":\"a\"}\n", http.StatusCreated},
	} {
		if got := post(t, srv.URL, c.body); got != c.status {
			t.Errorf("POST %s: %d, want %d", c.body, got, c.status)
		}
	}
	var snap ledger.Snapshot
	resp, err := http.Get(page.URL + "/api/ledger")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&snap)
	resp.Body.Close()
	if snap.Counts != (ledger.Counts{Accepted: 3, Rejected: 2, NotIssued: 1}) || snap.Highest != 8 {
		t.Fatalf("the ledger after the writes: %+v, want 3 accepted (5, 7, 8), 2 rejected (5 stale, 101 not issued)", snap)
	}
}

// TestEventsAreProxiedOneByOne checks that each SSE event reaches the page when the controller
// sends it, not when the stream ends: the upstream holds the stream open after its first event.
func TestEventsAreProxiedOneByOne(t *testing.T) {
	release := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: current\ndata: {\"fence\":1}\n\n")
		w.(http.Flusher).Flush()
		<-release
	}))
	defer upstream.Close()
	defer close(release)
	srv, _ := newDemo(t, upstream.URL)

	resp, err := http.Get(srv.URL + "/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(resp.Body).ReadString('\n')
		line <- s
	}()
	select {
	case got := <-line:
		if got != "event: current\n" {
			t.Fatalf("first line %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first event did not come through while the stream is open: the proxy buffers")
	}
}

func TestControllerURLMustBeHTTP(t *testing.T) {
	l, err := ledger.Open(t.TempDir(), issuedUpTo(100))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := Handler(l, timeline.New(), "controller:8080", controllers.NewTransport(nil), slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "controller URL") {
		t.Fatalf("error %v, want one naming the controller URL", err)
	}
}

// TestThePageRefusesWrites: the page's address, the one the stack publishes, records nothing.
func TestThePageRefusesWrites(t *testing.T) {
	page, _ := newDemo(t, "http://127.0.0.1:1")
	if got := post(t, page.URL, `{"fence":5,"holder":"a"}`); got != http.StatusForbidden {
		t.Fatalf("a write on the page's address: %d, want 403", got)
	}
	resp, err := http.Get(page.URL + "/api/ledger")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var snap ledger.Snapshot
	json.NewDecoder(resp.Body).Decode(&snap)
	if snap.Counts != (ledger.Counts{}) {
		t.Fatalf("the page's address recorded a write: %+v", snap.Counts)
	}
}

// TestAWriteTheLedgerCannotCheckIs503: with the controllers out of reach, a write above the
// highest accepted fence is answered 503 with Retry-After and its own code, and nothing is
// recorded.
func TestAWriteTheLedgerCannotCheckIs503(t *testing.T) {
	page, writes := newDemoOf(t, "http://127.0.0.1:1", unreadable{})
	resp, err := http.Post(writes.URL+"/api/ledger/entries", "application/json", strings.NewReader(`{"fence":5,"holder":"a"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer WriteAnswer
	json.NewDecoder(resp.Body).Decode(&answer)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || answer.Code != "controller_unreachable" || answer.Entry != nil {
		t.Fatalf("%s, Retry-After %q, %+v; want 503 controller_unreachable with Retry-After and no entry", resp.Status, resp.Header.Get("Retry-After"), answer)
	}
	var snap ledger.Snapshot
	r2, err := http.Get(page.URL + "/api/ledger")
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Body.Close()
	json.NewDecoder(r2.Body).Decode(&snap)
	if snap.Counts != (ledger.Counts{}) {
		t.Fatalf("the unchecked write was recorded: %+v", snap.Counts)
	}
}
