package swarmlease

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// waitFor bounds every wait of these tests: generous, because it is only reached on failure.
const waitFor = 10 * time.Second

// fakeElection is the state that fake controllers share, as replicas share the store.
type fakeElection struct {
	mu    sync.Mutex
	state State
	subs  map[chan State]struct{}
}

func newFakeElection(s State) *fakeElection {
	return &fakeElection{state: s, subs: map[chan State]struct{}{}}
}

// set changes the state and tells every open stream.
func (e *fakeElection) set(s State) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.state = s
	for ch := range e.subs {
		ch <- s
	}
}

func (e *fakeElection) subscribe() (chan State, State) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ch := make(chan State, 64)
	e.subs[ch] = struct{}{}
	return ch, e.state
}

func (e *fakeElection) unsubscribe(ch chan State) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.subs, ch)
}

// fakeController serves GET /v1/events of a fakeElection as the real server does: "current"
// first, then "change" for every new state, with keep-alive comments in between.
type fakeController struct {
	election *fakeElection
	streams  atomic.Int64 // streams that sent their "current" event
	active   atomic.Int64 // streams open now
	started  chan struct{}
	closing  chan struct{}
	once     sync.Once
}

func newFakeController(e *fakeElection) *fakeController {
	return &fakeController{election: e, started: make(chan struct{}, 100), closing: make(chan struct{})}
}

func (c *fakeController) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/events" {
		http.NotFound(w, r)
		return
	}
	c.active.Add(1)
	defer c.active.Add(-1)
	sub, cur := c.election.subscribe()
	defer c.election.unsubscribe(sub)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if !writeEvent(w, "current", cur) {
		return
	}
	c.streams.Add(1)
	c.started <- struct{}{}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.closing:
			return // a graceful shutdown: the stream ends cleanly
		case s := <-sub:
			if !writeEvent(w, "change", s) {
				return
			}
		}
	}
}

// shutdown ends every stream cleanly, like the server's graceful shutdown.
func (c *fakeController) shutdown() { c.once.Do(func() { close(c.closing) }) }

// waitStreams waits until n streams have sent their "current" event in total.
func (c *fakeController) waitStreams(t *testing.T, n int64) {
	t.Helper()
	deadline := time.After(waitFor)
	for c.streams.Load() < n {
		select {
		case <-c.started:
		case <-deadline:
			t.Fatalf("%d streams started, want %d", c.streams.Load(), n)
		}
	}
}

// waitIdle waits until no stream is open.
func (c *fakeController) waitIdle(t *testing.T) {
	t.Helper()
	poll(t, "the controller's streams to end", func() bool { return c.active.Load() == 0 })
}

func writeEvent(w http.ResponseWriter, name string, s State) bool {
	data, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data); err != nil {
		return false
	}
	return http.NewResponseController(w).Flush() == nil
}

// serveOn serves h on ln until the test ends (or the returned stop is called).
func serveOn(t *testing.T, ln net.Listener, h http.Handler) *httptest.Server {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(func() { stopServer(ts) })
	return ts
}

// stopServer closes ts even with streams open (httptest's Close alone waits for them).
func stopServer(ts *httptest.Server) {
	ts.CloseClientConnections()
	ts.Close()
}

func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// deadAddr is an address nothing listens on: connections are refused at once.
func deadAddr(t *testing.T) string {
	ln := listen(t, "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// poll waits until cond holds, checking every few milliseconds, for at most waitFor.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(waitFor); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // poll interval, not synchronisation
	}
}

// item is one value of a Watch.
type item struct {
	s   State
	err error
}

// collect ranges over a Watch in a goroutine; the channel closes when the Watch ends.
func collect(ctx context.Context, o *Observer) <-chan item {
	ch := make(chan item, 100)
	go func() {
		defer close(ch)
		for s, err := range o.Watch(ctx) {
			ch <- item{s, err}
		}
	}()
	return ch
}

// next returns the next value of a collected Watch.
func next(t *testing.T, ch <-chan item) item {
	t.Helper()
	select {
	case it, ok := <-ch:
		if !ok {
			t.Fatal("the watch ended")
		}
		return it
	case <-time.After(waitFor):
		t.Fatal("no value from the watch")
	}
	return item{}
}

// expectState checks that the next value is want (compared as the observer compares).
func expectState(t *testing.T, ch <-chan item, want State) {
	t.Helper()
	it := next(t, ch)
	if it.err != nil {
		t.Fatalf("got error %v, want state %+v", it.err, want)
	}
	if changed(it.s, want) {
		t.Fatalf("got state %+v, want %+v", it.s, want)
	}
}

// expectEnd checks that the watch ends without another value.
func expectEnd(t *testing.T, ch <-chan item) {
	t.Helper()
	select {
	case it, ok := <-ch:
		if ok {
			t.Fatalf("got %+v after the end", it)
		}
	case <-time.After(waitFor):
		t.Fatal("the watch did not end")
	}
}

func held(holder string, fence uint64) State {
	return State{Namespace: "demo", Exists: true, Acquired: true, HolderID: holder, NodeID: "n-" + holder, TaskID: "t-" + holder, Fence: fence}
}

func free(fence uint64) State {
	return State{Namespace: "demo", Exists: true, Fence: fence}
}

// fast are options that keep the tests quick: short back-off, no jitter.
func fast() []Option {
	return []Option{WithBackoff(5*time.Millisecond, 50*time.Millisecond), WithJitter(func() float64 { return 0 })}
}

// discardLog silences the reverse proxy's complaints about the streams the tests cut.
var discardLog = log.New(io.Discard, "", 0)

// countingHandler counts the warnings logged through it.
type countingHandler struct{ n atomic.Int64 }

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.n.Add(1)
	}
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }
