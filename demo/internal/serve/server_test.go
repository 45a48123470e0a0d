package serve

import (
	"bufio"
	"encoding/json"
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

// newDemo serves a fresh ledger's page address and write address.
func newDemo(t *testing.T, controller string) (page, writes *httptest.Server) {
	t.Helper()
	l, err := ledger.Open(t.TempDir())
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
		{`{"fence":5,"holder":"a"}`, http.StatusConflict}, // stale: recorded as rejected
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
	if snap.Counts != (ledger.Counts{Accepted: 3, Rejected: 1}) || snap.Highest != 8 {
		t.Fatalf("the ledger after the writes: %+v, want 3 accepted (5, 7, 8), 1 rejected", snap)
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
	l, err := ledger.Open(t.TempDir())
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
