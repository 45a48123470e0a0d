package swarmlease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestWatchYieldsChangesOnly(t *testing.T) {
	e := newFakeElection(State{Namespace: "demo"})
	c := newFakeController(e)
	srv := serveOn(t, listen(t, "127.0.0.1:0"), c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := collect(ctx, Connect(srv.URL, fast()...))

	expectState(t, ch, State{Namespace: "demo"})
	c.waitStreams(t, 1)
	e.set(held("a", 1))
	// A renewal: new timestamps, same holder and fence. Not a change; the next value proves it.
	renewed := held("a", 1)
	now := time.Now()
	renewed.RenewedAt, renewed.ExpiresAt = &now, &now
	e.set(renewed)
	e.set(free(1))
	e.set(held("b", 2))
	expectState(t, ch, held("a", 1))
	expectState(t, ch, free(1))
	expectState(t, ch, held("b", 2))
}

// TestReplaySuppressedAcrossRestart: a controller restarting on the same address replays the
// current state as its first event; the consumer sees it once.
func TestReplaySuppressedAcrossRestart(t *testing.T) {
	for _, graceful := range []bool{true, false} {
		t.Run(fmt.Sprintf("graceful=%v", graceful), func(t *testing.T) {
			e := newFakeElection(held("a", 1))
			ln := listen(t, "127.0.0.1:0")
			addr := ln.Addr().String()
			first := newFakeController(e)
			srv := serveOn(t, ln, first)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch := collect(ctx, Connect("http://"+addr, fast()...))
			expectState(t, ch, held("a", 1))

			if graceful {
				first.shutdown() // the stream ends cleanly, as on SIGTERM
			}
			stopServer(srv)
			second := newFakeController(e)
			srv = serveOn(t, listen(t, addr), second)
			second.waitStreams(t, 1) // the client is back, and got the replayed "current"
			e.set(held("b", 2))
			expectState(t, ch, held("b", 2)) // not a second held("a", 1)

			// Once more, with a change while the controller is away: the replay is that change.
			if graceful {
				second.shutdown()
			}
			stopServer(srv)
			e.set(free(2))
			third := newFakeController(e)
			serveOn(t, listen(t, addr), third)
			third.waitStreams(t, 1)
			expectState(t, ch, free(2))
			e.set(held("c", 3))
			expectState(t, ch, held("c", 3))
		})
	}
}

// switchProxy forwards to one of several backends, as a Swarm VIP does between replicas;
// switchTo cuts the open streams so that clients reconnect to the new backend.
type switchProxy struct {
	mu       sync.Mutex
	target   *httptest.Server
	forwards map[*httptest.Server]*atomic.Int64
}

func (p *switchProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	target := p.target
	p.forwards[target].Add(1)
	p.mu.Unlock()
	u, _ := url.Parse(target.URL)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // stream every write at once, as SSE needs
	rp.ErrorLog = discardLog
	rp.ServeHTTP(w, r)
}

func (p *switchProxy) switchTo(ts *httptest.Server) {
	p.mu.Lock()
	old := p.target
	p.target = ts
	p.mu.Unlock()
	old.CloseClientConnections()
}

// TestReplaySuppressedAcrossReplicas: two controllers of one election, the client's URL behind
// a proxy that moves it from one to the other. Both send the same state; it is yielded once.
func TestReplaySuppressedAcrossReplicas(t *testing.T) {
	e := newFakeElection(held("a", 1))
	ca, cb := newFakeController(e), newFakeController(e)
	a := serveOn(t, listen(t, "127.0.0.1:0"), ca)
	b := serveOn(t, listen(t, "127.0.0.1:0"), cb)
	p := &switchProxy{target: a, forwards: map[*httptest.Server]*atomic.Int64{a: {}, b: {}}}
	proxy := httptest.NewServer(p)
	defer stopServer(proxy)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := collect(ctx, Connect(proxy.URL, fast()...))
	expectState(t, ch, held("a", 1))
	ca.waitStreams(t, 1)

	for i, step := range []struct {
		to   *httptest.Server
		ctrl *fakeController
		next State
	}{
		{b, cb, held("b", 2)},
		{a, ca, free(2)},
		{b, cb, held("c", 3)},
	} {
		before := step.ctrl.streams.Load()
		p.switchTo(step.to)
		step.ctrl.waitStreams(t, before+1) // the replayed "current" went out
		e.set(step.next)
		expectState(t, ch, step.next) // the first value after the switch is the change, no replay
		t.Logf("switch %d: ok", i+1)
	}
}

func TestInitialTimeout(t *testing.T) {
	t.Run("server down", func(t *testing.T) {
		const timeout = 300 * time.Millisecond
		o := Connect("http://"+deadAddr(t), append(fast(), WithInitialTimeout(timeout))...)
		start := time.Now()
		ch := collect(context.Background(), o)
		it := next(t, ch)
		took := time.Since(start)
		if !errors.Is(it.err, ErrInitialTimeout) {
			t.Fatalf("err = %v, want ErrInitialTimeout", it.err)
		}
		var opErr *net.OpError
		if !errors.As(it.err, &opErr) || !strings.Contains(it.err.Error(), "refused") {
			t.Fatalf("err = %v, does not wrap the connection error", it.err)
		}
		if took < timeout || took > timeout+5*time.Second {
			t.Fatalf("gave up after %v, want about %v", took, timeout)
		}
		expectEnd(t, ch)
		t.Logf("%v after %v", it.err, took)
	})

	t.Run("HTTP error", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Request-Id", "req_header")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":"this server has reached its limit of SSE clients","code":"too_many_clients",` +
				`"details":"retry later","request_id":"req_body","retry_after_ms":20}`))
		}))
		defer srv.Close()
		ch := collect(context.Background(), Connect(srv.URL, append(fast(), WithInitialTimeout(500*time.Millisecond))...))
		it := next(t, ch)
		var apiErr *APIError
		if !errors.Is(it.err, ErrInitialTimeout) || !errors.As(it.err, &apiErr) {
			t.Fatalf("err = %v, want ErrInitialTimeout wrapping an *APIError", it.err)
		}
		want := APIError{StatusCode: 503, Code: "too_many_clients", Message: "this server has reached its limit of SSE clients",
			Details: "retry later", RequestID: "req_body", RetryAfter: 20 * time.Millisecond}
		if *apiErr != want {
			t.Fatalf("APIError %+v, want %+v", *apiErr, want)
		}
		expectEnd(t, ch)
	})

	t.Run("accepted but never answered", func(t *testing.T) {
		// A controller whose store is unreachable holds the request until it has a state.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
		defer stopServer(srv)
		ch := collect(context.Background(), Connect(srv.URL, append(fast(), WithInitialTimeout(200*time.Millisecond))...))
		if it := next(t, ch); !errors.Is(it.err, ErrInitialTimeout) || !strings.Contains(it.err.Error(), "no response") {
			t.Fatalf("err = %v, want ErrInitialTimeout (no response)", it.err)
		}
		expectEnd(t, ch)
	})

	t.Run("not an event stream", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html>"))
		}))
		defer srv.Close()
		ch := collect(context.Background(), Connect(srv.URL, append(fast(), WithInitialTimeout(300*time.Millisecond))...))
		if it := next(t, ch); !errors.Is(it.err, ErrInitialTimeout) || !strings.Contains(it.err.Error(), "text/html") {
			t.Fatalf("err = %v, want ErrInitialTimeout naming the content type", it.err)
		}
	})

	t.Run("the controller comes up in time", func(t *testing.T) {
		addr := deadAddr(t)
		failures := &countingHandler{}
		ch := collect(context.Background(), Connect("http://"+addr,
			append(fast(), WithInitialTimeout(waitFor), WithLogger(slog.New(failures)))...))
		// Let the observer fail a few times first: failures are logged, not yielded.
		poll(t, "three failed attempts", func() bool { return failures.n.Load() >= 3 })
		e := newFakeElection(free(1))
		serveOn(t, listen(t, addr), newFakeController(e))
		expectState(t, ch, free(1))
	})

	t.Run("no timeout after the first state", func(t *testing.T) {
		e := newFakeElection(free(1))
		ln := listen(t, "127.0.0.1:0")
		addr := ln.Addr().String()
		srv := serveOn(t, ln, newFakeController(e))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		const timeout = 300 * time.Millisecond
		start := time.Now()
		ch := collect(ctx, Connect(srv.URL, append(fast(), WithInitialTimeout(timeout))...))
		expectState(t, ch, free(1))
		stopServer(srv)
		// Down for several initial timeouts: the observer keeps trying, silently.
		poll(t, "three initial timeouts", func() bool { return time.Since(start) > 3*timeout })
		select {
		case it := <-ch:
			t.Fatalf("got %+v while the controller was down", it)
		default:
		}
		c := newFakeController(e)
		serveOn(t, listen(t, addr), c)
		c.waitStreams(t, 1)
		e.set(free(2))
		expectState(t, ch, free(2))
	})
}

func TestIdleTimeoutReconnects(t *testing.T) {
	e := newFakeElection(free(1))
	c := newFakeController(e)
	srv := serveOn(t, listen(t, "127.0.0.1:0"), c) // sends no keep-alives: every stream goes idle
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := collect(ctx, Connect(srv.URL, append(fast(), WithIdleTimeout(200*time.Millisecond))...))
	expectState(t, ch, free(1))
	c.waitStreams(t, 3) // dropped and reconnected at least twice; the replays were not yielded
	e.set(free(2))
	expectState(t, ch, free(2))
}

func TestWatchSkipsBadEvents(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		if requests.Add(1) == 1 {
			// An event type of a later version is ignored; invalid data ends the stream.
			fmt.Fprint(w, "event: hello\ndata: {}\n\nevent: current\ndata: {not json\n\n")
			return
		}
		writeEvent(w, "current", free(1))
		<-r.Context().Done()
	}))
	defer stopServer(srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := collect(ctx, Connect(srv.URL, fast()...))
	expectState(t, ch, free(1))
	if n := requests.Load(); n != 2 {
		t.Fatalf("%d requests, want 2 (a reconnect after the invalid event)", n)
	}
}

func TestWatchEnds(t *testing.T) {
	t.Run("context cancelled while streaming", func(t *testing.T) {
		e := newFakeElection(free(1))
		c := newFakeController(e)
		srv := serveOn(t, listen(t, "127.0.0.1:0"), c)
		ctx, cancel := context.WithCancel(context.Background())
		ch := collect(ctx, Connect(srv.URL, fast()...))
		expectState(t, ch, free(1))
		cancel()
		expectEnd(t, ch)
		c.waitIdle(t)
	})

	t.Run("context cancelled during back-off", func(t *testing.T) {
		e := newFakeElection(free(1))
		ln := listen(t, "127.0.0.1:0")
		srv := serveOn(t, ln, newFakeController(e))
		ctx, cancel := context.WithCancel(context.Background())
		// A back-off far longer than the test: only the cancellation can end the wait.
		failures := &countingHandler{}
		ch := collect(ctx, Connect(srv.URL, WithBackoff(time.Hour, time.Hour), WithLogger(slog.New(failures))))
		expectState(t, ch, free(1))
		stopServer(srv)
		poll(t, "the failure before the back-off", func() bool { return failures.n.Load() >= 1 })
		cancel()
		expectEnd(t, ch)
	})

	t.Run("context cancelled during the initial wait", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		failures := &countingHandler{}
		ch := collect(ctx, Connect("http://"+deadAddr(t), WithBackoff(time.Hour, time.Hour), WithLogger(slog.New(failures))))
		poll(t, "the first failure", func() bool { return failures.n.Load() >= 1 })
		cancel()
		expectEnd(t, ch) // no error: the caller ended it
	})

	t.Run("consumer breaks", func(t *testing.T) {
		e := newFakeElection(free(1))
		c := newFakeController(e)
		srv := serveOn(t, listen(t, "127.0.0.1:0"), c)
		n := 0
		for s := range Connect(srv.URL, fast()...).Watch(context.Background()) {
			n++
			if s.Fence == 1 {
				c.waitStreams(t, 1)
				e.set(free(2))
				continue
			}
			break
		}
		if n != 2 {
			t.Fatalf("%d states, want 2", n)
		}
		c.waitIdle(t) // the connection was closed when the range ended
	})

	t.Run("invalid configuration", func(t *testing.T) {
		for _, o := range []*Observer{
			Connect("ftp://example.com"),
			Connect("http://"),
			Connect("http://[::1"),
			Connect("http://x", WithBackoff(time.Second, time.Millisecond)),
			Connect("http://x", WithInitialTimeout(0)),
			Connect("http://x", WithHTTPClient(nil)),
			Connect("http://x", WithIdleTimeout(-1)),
			Connect("http://x", WithLogger(nil)),
			Connect("http://x", WithJitter(nil)),
		} {
			ch := collect(context.Background(), o)
			it := next(t, ch)
			if it.err == nil || !strings.HasPrefix(it.err.Error(), "swarmlease: ") {
				t.Fatalf("got %+v, want a configuration error", it)
			}
			expectEnd(t, ch)
			if _, err := o.WaitForHolder(context.Background(), time.Second); err == nil {
				t.Fatal("WaitForHolder: no error")
			}
		}
	})
}

func TestBaseURLPathPrefix(t *testing.T) {
	e := newFakeElection(free(1))
	mux := http.NewServeMux()
	mux.Handle("/lease/", http.StripPrefix("/lease", newFakeController(e)))
	srv := httptest.NewServer(mux)
	defer stopServer(srv)
	for _, base := range []string{srv.URL + "/lease", srv.URL + "/lease/"} {
		s, err := Connect(base, fast()...).WaitForHolder(context.Background(), 300*time.Millisecond)
		if !errors.Is(err, ErrNoHolder) || s.Fence != 1 {
			t.Fatalf("%s: %+v, %v; want the state without a holder", base, s, err)
		}
	}
}

func TestWaitForHolder(t *testing.T) {
	t.Run("skips states without a holder", func(t *testing.T) {
		e := newFakeElection(State{Namespace: "demo"})
		c := newFakeController(e)
		srv := serveOn(t, listen(t, "127.0.0.1:0"), c)
		type result struct {
			s   State
			err error
		}
		done := make(chan result, 1)
		go func() {
			s, err := Connect(srv.URL, fast()...).WaitForHolder(context.Background(), waitFor)
			done <- result{s, err}
		}()
		c.waitStreams(t, 1)
		expired := held("a", 1)
		expired.Acquired = false // the last holder is still named, but its lease expired
		for _, s := range []State{free(1), expired, held("b", 2)} {
			e.set(s)
		}
		select {
		case r := <-done:
			if r.err != nil || changed(r.s, held("b", 2)) {
				t.Fatalf("got %+v, %v; want b's term", r.s, r.err)
			}
		case <-time.After(waitFor):
			t.Fatal("WaitForHolder did not return")
		}
		c.waitIdle(t)
	})

	t.Run("holder at once", func(t *testing.T) {
		srv := serveOn(t, listen(t, "127.0.0.1:0"), newFakeController(newFakeElection(held("a", 1))))
		s, err := Connect(srv.URL).WaitForHolder(context.Background(), 0)
		if err != nil || s.HolderID != "a" {
			t.Fatalf("got %+v, %v", s, err)
		}
	})

	t.Run("no holder within the timeout", func(t *testing.T) {
		srv := serveOn(t, listen(t, "127.0.0.1:0"), newFakeController(newFakeElection(free(4))))
		s, err := Connect(srv.URL, fast()...).WaitForHolder(context.Background(), 300*time.Millisecond)
		if !errors.Is(err, ErrNoHolder) || s.Fence != 4 {
			t.Fatalf("got %+v, %v; want ErrNoHolder with the last state", s, err)
		}
	})

	t.Run("no controller within the timeout", func(t *testing.T) {
		// The timeout is shorter than the initial timeout: it ends the initial wait.
		_, err := Connect("http://"+deadAddr(t), fast()...).WaitForHolder(context.Background(), 300*time.Millisecond)
		if !errors.Is(err, ErrInitialTimeout) || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("err = %v, want ErrInitialTimeout with the connection error", err)
		}
		// The initial timeout is shorter than the timeout.
		_, err = Connect("http://"+deadAddr(t), append(fast(), WithInitialTimeout(100*time.Millisecond))...).
			WaitForHolder(context.Background(), waitFor)
		if !errors.Is(err, ErrInitialTimeout) {
			t.Fatalf("err = %v, want ErrInitialTimeout", err)
		}
	})

	t.Run("context cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := Connect("http://"+deadAddr(t)).WaitForHolder(ctx, waitFor); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

func TestAPIErrorOfAProxy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Bad Gateway", http.StatusBadGateway)
	}))
	defer srv.Close()
	_, err := Connect(srv.URL, fast()...).WaitForHolder(context.Background(), 300*time.Millisecond)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 502 || apiErr.Message != "Bad Gateway" || apiErr.Code != "" {
		t.Fatalf("err = %v (%+v)", err, apiErr)
	}
	if got := apiErr.Error(); got != "swarmlease: HTTP 502: Bad Gateway" {
		t.Fatalf("message %q", got)
	}
}
