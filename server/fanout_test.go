package server_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
	"github.com/regbo/lfp-swarm-lease/server"
)

// Tests of how /v1/events streams are written: HTTP/1.1 streams are hijacked and written by the
// hub's writer goroutines (server/fanout.go), other streams by their handler goroutine.

// metric is the value of the unlabelled gauge or counter name of s.
func metric(t *testing.T, s *server.Server, name string) float64 {
	t.Helper()
	fams, err := s.Metrics().Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name || len(f.GetMetric()) != 1 {
			continue
		}
		m := f.GetMetric()[0]
		if g := m.GetGauge(); g != nil {
			return g.GetValue()
		}
		return m.GetCounter().GetValue()
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// awaitMetric waits until metric name of s is want.
func awaitMetric(t *testing.T, s *server.Server, name string, want float64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		v := metric(t, s, name)
		if v == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %v after %v, want %v", name, v, within, want)
		}
		time.Sleep(5 * time.Millisecond) // poll interval
	}
}

// rawStream is GET /v1/events on a connection of its own, read only by the test goroutine: it
// holds no goroutine in the test process.
type rawStream struct {
	conn net.Conn
	body *bufio.Reader // the de-chunked body
}

// dialStream opens a raw stream; control, when set, configures its socket before it connects.
// The response must be 200 and chunked.
func dialStream(t *testing.T, base string, control func(fd uintptr) error) *rawStream {
	t.Helper()
	d := net.Dialer{}
	if control != nil {
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			var cerr error
			if err := rc.Control(func(fd uintptr) { cerr = control(fd) }); err != nil {
				return err
			}
			return cerr
		}
	}
	addr := strings.TrimPrefix(base, "http://")
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := fmt.Fprintf(conn, "GET /v1/events HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", addr); err != nil {
		t.Fatal(err)
	}
	return &rawStream{conn: conn}
}

// open reads the response head and the first frame, which must be the current event.
func (s *rawStream) open(t *testing.T) {
	t.Helper()
	_ = s.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(s.conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" ||
		resp.Header.Get("Content-Type") != "text/event-stream" || !requestIDPattern.MatchString(resp.Header.Get("X-Request-Id")) {
		t.Fatalf("GET /v1/events: %s, Transfer-Encoding %v, header %v", resp.Status, resp.TransferEncoding, resp.Header)
	}
	s.body = bufio.NewReader(resp.Body)
	if f := readFrame(t, s.body); !strings.HasPrefix(f, "event: current\n") {
		t.Fatalf("first frame %q", f)
	}
}

// nextEvent returns the next event (skipping comments), failing after timeout.
func (s *rawStream) nextEvent(t *testing.T, timeout time.Duration) string {
	t.Helper()
	_ = s.conn.SetReadDeadline(time.Now().Add(timeout))
	for {
		if f := readFrame(t, s.body); !strings.HasPrefix(f, ":") {
			return f
		}
	}
}

// hasFence reports whether an event's data carries fence.
func hasFence(event string, fence uint64) bool {
	return strings.Contains(event, fmt.Sprintf(`"fence":%d,`, fence))
}

// TestEventsSlowClientDoesNotDelayOthers: a client that never reads is dropped once its socket
// buffers are full (counted in sse_clients_dropped_total), and meanwhile every reading client
// gets every change promptly; what the dropped client received is whole frames, possibly
// followed by the start of one, never a mix.
func TestEventsSlowClientDoesNotDelayOthers(t *testing.T) {
	store := memstore.New()
	s, base, _ := startServer(t, store, server.Options{KeepAlive: time.Hour})
	var readers []*rawStream
	for range 8 {
		r := dialStream(t, base, nil)
		r.open(t)
		readers = append(readers, r)
	}
	// Never read, with the smallest receive buffer the kernel allows and a small segment size,
	// which keeps the server's send buffer small too (Linux sizes it by segments).
	slow := dialStream(t, base, func(fd uintptr) error {
		return errors.Join(syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1),
			syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, 536))
	})
	awaitMetric(t, s, "lfp_swarm_lease_sse_clients", float64(len(readers)+1), 5*time.Second)

	// Each term's event is ~2 KB, so the slow client's buffers fill within tens of changes.
	storm, err := lease.New(store, "srv", lease.Identity{HolderID: "storm-" + strings.Repeat("s", 1500)}, lease.WithTTL(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var worst time.Duration
	changes := 0
	for metric(t, s, "lfp_swarm_lease_sse_clients_dropped_total") == 0 {
		if changes == 500 {
			t.Fatalf("the slow client was not dropped after %d changes", changes)
		}
		res, err := storm.TryAcquire(ctx)
		if err != nil || !res.Acquired {
			t.Fatalf("try-acquire: %+v %v", res, err)
		}
		written := time.Now()
		for i, r := range readers {
			if f := r.nextEvent(t, 5*time.Second); !strings.HasPrefix(f, "event: change\n") || !hasFence(f, res.Grant.Fence) {
				t.Fatalf("reader %d: %q, want the change to fence %d", i, f, res.Grant.Fence)
			}
		}
		worst = max(worst, time.Since(written))
		if err := storm.Release(ctx, res.Grant.Fence); err != nil {
			t.Fatal(err)
		}
		for _, r := range readers {
			r.nextEvent(t, 5*time.Second)
		}
		changes += 2
	}
	t.Logf("slow client dropped after %d changes; the readers got each acquisition within %v at worst", changes, worst)
	// A write blocked on the slow client would have held the readers up to its timeout.
	if worst > time.Second {
		t.Errorf("a reading client waited %v for a change while the slow client was stuck", worst)
	}
	awaitMetric(t, s, "lfp_swarm_lease_sse_clients", float64(len(readers)), 5*time.Second)

	// The dropped client's bytes: whole frames, then at most the start of one.
	_ = slow.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	raw, err := io.ReadAll(slow.conn)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("reading the dropped stream: %v", err)
	}
	_, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		t.Fatalf("the dropped stream has no response head: %q", raw)
	}
	data, err := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(body)))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("the dropped stream's body ended with %v, want cut off (io.ErrUnexpectedEOF)", err)
	}
	frames := strings.Split(string(data), "\n\n")
	for i, f := range frames[:len(frames)-1] {
		if !strings.HasPrefix(f, "event: ") && !strings.HasPrefix(f, ": keep-alive") {
			t.Fatalf("dropped stream, frame %d: %.200q", i, f)
		}
	}
	t.Logf("the dropped client had received %d bytes: %d whole frames", len(raw), len(frames)-1)
}

// TestEventsDisconnectsFreeStreams: clients that close their connection, or reset it, are
// removed within moments (sse_clients falls back to 0) even though no keep-alive is written
// that could fail.
func TestEventsDisconnectsFreeStreams(t *testing.T) {
	s, base, _ := startServer(t, memstore.New(), server.Options{KeepAlive: time.Hour})
	const clients = 40
	var streams []*rawStream
	for range clients {
		r := dialStream(t, base, nil)
		r.open(t)
		streams = append(streams, r)
	}
	awaitMetric(t, s, "lfp_swarm_lease_sse_clients", clients, 5*time.Second)
	for _, r := range streams[:clients/2] {
		r.conn.Close() // FIN
	}
	awaitMetric(t, s, "lfp_swarm_lease_sse_clients", clients/2, 2*time.Second)
	for _, r := range streams[clients/2:] {
		_ = r.conn.(*net.TCPConn).SetLinger(0) // RST
		r.conn.Close()
	}
	awaitMetric(t, s, "lfp_swarm_lease_sse_clients", 0, 2*time.Second)
	if v := metric(t, s, "lfp_swarm_lease_sse_clients_dropped_total"); v != 0 {
		t.Fatalf("sse_clients_dropped_total = %v: clients that left are not dropped for being slow", v)
	}
	// The slots are free again.
	r := dialStream(t, base, nil)
	r.open(t)
	awaitMetric(t, s, "lfp_swarm_lease_sse_clients", 1, 2*time.Second)
}

// TestEventsHijackedStreamsHoldNoGoroutine: HTTP/1.1 streams are written by the hub's writers,
// not by a goroutine per stream (Linux: elsewhere every stream keeps its handler goroutine).
func TestEventsHijackedStreamsHoldNoGoroutine(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the SSE fan-out runs on Linux only")
	}
	s, base, _ := startServer(t, memstore.New(), server.Options{KeepAlive: time.Hour})
	first := dialStream(t, base, nil) // starts the writers
	first.open(t)
	time.Sleep(50 * time.Millisecond) // net/http's connection goroutine exits after the handover
	before := runtime.NumGoroutine()
	const clients = 200
	streams := make([]*rawStream, clients)
	for i := range streams {
		streams[i] = dialStream(t, base, nil)
		streams[i].open(t)
	}
	awaitMetric(t, s, "lfp_swarm_lease_sse_clients", clients+1, 5*time.Second)
	time.Sleep(50 * time.Millisecond)
	if grown := runtime.NumGoroutine() - before; grown > clients/10 {
		t.Fatalf("%d more goroutines with %d more streams: the streams were not handed to the hub's writers", grown, clients)
	}
}

// TestEventsShutdownEndsHijackedStreams: when Serve's context ends while changes are being
// written, every hijacked stream ends with the last chunk after a whole frame, and Serve
// returns promptly.
func TestEventsShutdownEndsHijackedStreams(t *testing.T) {
	store := memstore.New()
	_, base, stop := startServer(t, store, server.Options{KeepAlive: 5 * time.Millisecond})
	var streams []*rawStream
	for range 20 {
		r := dialStream(t, base, nil)
		r.open(t)
		streams = append(streams, r)
	}
	// Changes keep coming while the server stops.
	a := contender(t, store, "a")
	stopStorm := make(chan struct{})
	stormDone := make(chan struct{})
	go func() {
		defer close(stormDone)
		ctx := context.Background()
		for {
			select {
			case <-stopStorm:
				return
			default:
			}
			if res, err := a.TryAcquire(ctx); err == nil && res.Acquired {
				_ = a.Release(ctx, res.Grant.Fence)
			}
		}
	}()
	defer func() { close(stopStorm); <-stormDone }()
	time.Sleep(200 * time.Millisecond)
	began := time.Now()
	if err := stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Fatalf("Serve took %v to return", d)
	}
	for i, r := range streams {
		_ = r.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		rest, err := io.ReadAll(r.body) // the chunked body: io.ErrUnexpectedEOF without the last chunk
		if err != nil {
			t.Fatalf("stream %d: %v after %d bytes, want the clean end of the body", i, err, len(rest))
		}
		if len(rest) > 0 && !bytes.HasSuffix(rest, []byte("\n\n")) {
			t.Fatalf("stream %d ends inside a frame: %.200q", i, rest[max(len(rest)-200, 0):])
		}
	}
}

// TestEventsHTTP2KeepsHandler: an HTTP/2 stream cannot be hijacked; it is served by its
// handler goroutine with the same events, and counted until it ends.
func TestEventsHTTP2KeepsHandler(t *testing.T) {
	store := memstore.New()
	s, _, _ := startServer(t, store, server.Options{}) // runs the hub
	ts := httptest.NewUnstartedServer(s.Handler())
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/v1/events", nil)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%s %s, Content-Type %q", resp.Proto, resp.Status, resp.Header.Get("Content-Type"))
	}
	expectCurrentThenChange(t, bufio.NewReader(resp.Body), store)
	awaitMetric(t, s, "lfp_swarm_lease_sse_clients", 1, 2*time.Second)
	cancel()
	awaitMetric(t, s, "lfp_swarm_lease_sse_clients", 0, 2*time.Second)
}

// TestEventsUnhijackableWriterKeepsHandler: a response writer that cannot be hijacked (a
// middleware's wrapper, a recorder) is served by the handler goroutine.
func TestEventsUnhijackableWriterKeepsHandler(t *testing.T) {
	store := memstore.New()
	s, _, _ := startServer(t, store, server.Options{})
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, w: pw}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/v1/events", nil)
	handled := make(chan struct{})
	go func() {
		defer close(handled)
		s.Handler().ServeHTTP(w, req)
	}()
	expectCurrentThenChange(t, bufio.NewReader(pr), store)
	if w.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("Content-Type %q", w.header.Get("Content-Type"))
	}
	awaitMetric(t, s, "lfp_swarm_lease_sse_clients", 1, 2*time.Second)
	cancel()
	pr.Close() // a write blocked on the pipe fails
	select {
	case <-handled:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler did not return after the request ended")
	}
	awaitMetric(t, s, "lfp_swarm_lease_sse_clients", 0, time.Second)
}

// expectCurrentThenChange reads the current event from r, makes a change on store, and
// expects its event next.
func expectCurrentThenChange(t *testing.T, r *bufio.Reader, store lease.Store) {
	t.Helper()
	if f := readFrame(t, r); !strings.HasPrefix(f, "event: current\n") {
		t.Fatalf("first frame %q", f)
	}
	res, err := contender(t, store, "a").TryAcquire(context.Background())
	if err != nil || !res.Acquired {
		t.Fatalf("try-acquire: %+v %v", res, err)
	}
	for {
		f := readFrame(t, r)
		if strings.HasPrefix(f, ":") {
			continue
		}
		if !strings.HasPrefix(f, "event: change\n") || !hasFence(f, res.Grant.Fence) {
			t.Fatalf("frame %q, want the change to fence %d", f, res.Grant.Fence)
		}
		return
	}
}

// pipeWriter is a flushing http.ResponseWriter into a pipe that cannot be hijacked.
type pipeWriter struct {
	header http.Header
	w      *io.PipeWriter
}

func (p *pipeWriter) Header() http.Header         { return p.header }
func (p *pipeWriter) WriteHeader(int)             {}
func (p *pipeWriter) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipeWriter) Flush()                      {}
