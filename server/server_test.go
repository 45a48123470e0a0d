package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
	"github.com/regbo/lfp-swarm-lease/server"
)

// In-process tests of what a server process cannot be configured for (the SSE client limit) or
// what needs the store under the test's control. The process-level tests of the API are in
// cli/cmd/lfp-swarm-lease/serve_test.go.

var requestIDPattern = regexp.MustCompile(`^req_[0-9a-f]{32}$`)

// flakyStore is a memory store whose reads fail while down is set.
type flakyStore struct {
	*memstore.Store
	down atomic.Bool
}

func (s *flakyStore) Load(ctx context.Context, ns string) (lease.Record, lease.Version, error) {
	if s.down.Load() {
		return lease.Record{}, 0, fmt.Errorf("flaky store: %w", lease.ErrUnavailable)
	}
	return s.Store.Load(ctx, ns)
}

// serve runs a server of a new election on store, with opts, on a free port until the test
// ends, and returns its base URL and a function that shuts it down and returns Serve's error.
func serve(t *testing.T, store lease.Store, opts server.Options) (base string, stop func() error) {
	t.Helper()
	_, base, stop = startServer(t, store, opts)
	return base, stop
}

// startServer is serve that also returns the Server.
func startServer(t *testing.T, store lease.Store, opts server.Options) (s *server.Server, base string, stop func() error) {
	t.Helper()
	if store != nil { // nil: an elections-only server, without an election
		e, err := lease.New(store, "srv", lease.Identity{HolderID: "observer"})
		if err != nil {
			t.Fatal(err)
		}
		opts.Election = e
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 50 * time.Millisecond
	}
	s, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	var result error
	stopped := false
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			result = <-served
		}
		return result
	}
	t.Cleanup(func() { _ = stop() })
	return s, "http://" + ln.Addr().String(), stop
}

// contender is another party of the election on store.
func contender(t *testing.T, store lease.Store, holder string) *lease.Election {
	t.Helper()
	e, err := lease.New(store, "srv", lease.Identity{HolderID: holder}, lease.WithTTL(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// errorBody decodes the one error shape and checks its request_id against the header.
func errorBody(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("error body: %v", err)
	}
	id := resp.Header.Get("X-Request-Id")
	if !requestIDPattern.MatchString(id) || m["request_id"] != id {
		t.Fatalf("X-Request-Id %q, body request_id %v", id, m["request_id"])
	}
	return m
}

// openStream GETs /v1/events and returns the response and a reader of its frames.
func openStream(t *testing.T, ctx context.Context, base string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/events", nil)
	resp, err := (&http.Transport{DisableKeepAlives: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, bufio.NewReader(resp.Body)
}

// readFrame reads one SSE frame (up to its blank line).
func readFrame(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	var b strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v (so far %q)", err, b.String())
		}
		if line == "\n" {
			return b.String()
		}
		b.WriteString(line)
	}
}

// TestSSEClientLimit: beyond MaxSSEClients, /v1/events answers 503 too_many_clients with
// Retry-After and the error shape; a freed slot can be taken again.
func TestSSEClientLimit(t *testing.T) {
	base, _ := serve(t, memstore.New(), server.Options{MaxSSEClients: 1})
	ctx, cancel := context.WithCancel(context.Background())
	first, r := openStream(t, ctx, base)
	if first.StatusCode != http.StatusOK {
		t.Fatalf("first client: %s", first.Status)
	}
	if f := readFrame(t, r); !strings.HasPrefix(f, "event: current\n") {
		t.Fatalf("first frame %q", f)
	}
	second, _ := openStream(t, context.Background(), base)
	if second.StatusCode != http.StatusServiceUnavailable || second.Header.Get("Retry-After") == "" {
		t.Fatalf("second client: %s, Retry-After %q", second.Status, second.Header.Get("Retry-After"))
	}
	if m := errorBody(t, second); m["code"] != "too_many_clients" {
		t.Fatalf("second client's error: %v", m)
	}
	cancel() // the first client leaves
	deadline := time.Now().Add(5 * time.Second)
	for {
		third, r := openStream(t, context.Background(), base)
		if third.StatusCode == http.StatusOK {
			if f := readFrame(t, r); !strings.HasPrefix(f, "event: current\n") {
				t.Fatalf("first frame %q", f)
			}
			return
		}
		errorBody(t, third)
		if time.Now().After(deadline) {
			t.Fatal("the freed slot was never available again")
		}
		time.Sleep(20 * time.Millisecond) // poll interval: the server notices the disconnect asynchronously
	}
}

// TestServeEndsStreamsOnShutdown: ending Serve's context ends every SSE stream with a clean end
// of the body, and Serve returns nil promptly.
func TestServeEndsStreamsOnShutdown(t *testing.T) {
	base, stop := serve(t, memstore.New(), server.Options{KeepAlive: time.Hour})
	var readers []*bufio.Reader
	for range 3 {
		_, r := openStream(t, context.Background(), base)
		readFrame(t, r)
		readers = append(readers, r)
	}
	began := time.Now()
	if err := stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	for i, r := range readers {
		if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
			t.Fatalf("stream %d after shutdown: %q, %v (want a clean end)", i, rest, err)
		}
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Fatalf("shutdown took %v with open streams", d)
	}
}

// TestStateBeforeFirstRead: while the store has never been read, /v1/state answers 503
// not_ready after a bounded wait instead of hanging; once the store answers, it serves the
// state.
func TestStateBeforeFirstRead(t *testing.T) {
	t.Parallel() // seconds of waiting on a store of its own
	store := &flakyStore{Store: memstore.New()}
	store.down.Store(true)
	base, _ := serve(t, store, server.Options{})
	// The server may wait a few seconds for a first read, but not for ever.
	const within = 8 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/state", nil)
	resp, err := http.DefaultClient.Do(req)
	switch {
	case err != nil && ctx.Err() != nil:
		t.Errorf("/v1/state did not answer within %v while the store has never been read: "+
			"hub.snapshot waits for the first snapshot without bound", within)
	case err != nil:
		t.Fatal(err)
	default:
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("/v1/state before the first read: %s", resp.Status)
		}
		if m := errorBody(t, resp); m["code"] != "not_ready" {
			t.Fatalf("error %v", m)
		}
	}
	store.down.Store(false)
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(base + "/v1/state")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/v1/state still %s after the store recovered", resp.Status)
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
}

// TestStateFollowsRenewals: /v1/state is the complete current snapshot — after the holder
// renews, its renewed_at and expires_at follow within a few poll intervals (the SSE stream
// suppresses renewals; the state must not).
func TestStateFollowsRenewals(t *testing.T) {
	store := memstore.New()
	base, _ := serve(t, store, server.Options{})
	a := contender(t, store, "a")
	res, err := a.TryAcquire(context.Background())
	if err != nil || !res.Acquired {
		t.Fatalf("try-acquire: %+v %v", res, err)
	}
	type state struct {
		HolderID  string    `json:"holder_id"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	get := func() state {
		resp, err := http.Get(base + "/v1/state")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var s state
		if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for deadline := time.Now().Add(5 * time.Second); get().HolderID != "a"; {
		if time.Now().After(deadline) {
			t.Fatal("/v1/state never showed a's term")
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
	time.Sleep(20 * time.Millisecond) // lets the wall clock advance, so that the renewal moves expires_at
	g, err := a.Renew(context.Background(), res.Grant.Fence)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Second) // 20 poll intervals
	for {
		s := get()
		if s.ExpiresAt.Equal(g.ExpiresAt) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("/v1/state still shows expires_at %s a second after a renewal to %s: the watcher "+
				"passes on only holder/fence changes, so renewed_at and expires_at stay those of the acquisition",
				s.ExpiresAt.Format(time.RFC3339Nano), g.ExpiresAt.Format(time.RFC3339Nano))
			return
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
}
