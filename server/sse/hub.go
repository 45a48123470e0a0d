package sse

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Hub fans the frames of one source out to every client of a stream endpoint. Each change is
// encoded once and the same frame goes to every client; a new frame that is no change (an
// election's renewal) only replaces the current one, for new subscribers, without waking any
// client. Publishing never blocks, and a client that does not keep up is dropped (it reconnects
// and gets the current frame), so one slow client cannot slow the others.
//
// A client is first a subscriber, a Stream written by its handler goroutine. HTTP/1.1 streams
// are then handed over (HandOver) to the fan-out, whose few writer goroutines write them
// directly to their connections (fanout.go); the others (HTTP/2, TLS, platforms without the
// fan-out) stay subscribers.
type Hub struct {
	mu      sync.Mutex
	clients map[*Stream]struct{} // served by their handler goroutines
	// current is the frame of the newest state, ready for new subscribers.
	current   []byte
	published bool
	ready     chan struct{} // closed by the first Publish
	limit     int
	keepAlive time.Duration
	metrics   Metrics
	// connected counts every client, subscriber or fan-out stream, against limit. It is
	// raised under mu; the fan-out's writers lower it without mu.
	connected atomic.Int64
	fan       *fanout // started by the first hand-over
	closed    bool    // Close was called: no more hand-overs
	closeOnce sync.Once
}

// Metrics is what a Hub records.
type Metrics interface {
	// SSEClientJoined counts a client in.
	SSEClientJoined()
	// SSEClientLeft counts a client out; dropped: it was dropped for not keeping up.
	SSEClientLeft(dropped bool)
}

// clientBuffer is how many changes a client may lag behind before it is dropped.
const clientBuffer = 16

// FirstFrameWait bounds how long a stream's request waits for its first frame, the store's first
// read: a replica that cannot read its store answers 503 instead of hanging.
const FirstFrameWait = 5 * time.Second

// Errors of Subscribe.
var (
	ErrNotReady       = errors.New("sse: nothing published yet")
	ErrTooManyClients = errors.New("sse: too many clients")
	errDropped        = errors.New("sse: the client does not keep up")
)

// NewHub returns a hub of at most limit clients (0: no limit) whose hijacked streams get a
// keep-alive comment every keepAlive.
func NewHub(limit int, keepAlive time.Duration, m Metrics) *Hub {
	return &Hub{clients: map[*Stream]struct{}{}, ready: make(chan struct{}), limit: limit, keepAlive: keepAlive, metrics: m}
}

// Publish makes current the frame new subscribers start with, and sends change, when not nil,
// to every client.
func (h *Hub) Publish(current, change []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.current = current
	if !h.published {
		close(h.ready)
		h.published = true
	}
	if change == nil {
		return
	}
	for c := range h.clients {
		if !c.Offer(change) {
			h.dropLocked(c, true)
		}
	}
	if h.fan != nil && !h.closed {
		h.fan.broadcast(appendChunk(nil, change))
	}
}

// AwaitFirst waits for the first Publish, at most FirstFrameWait (ErrNotReady).
func (h *Hub) AwaitFirst(ctx context.Context) error {
	t := time.NewTimer(FirstFrameWait)
	defer t.Stop()
	select {
	case <-h.ready:
		return nil
	case <-t.C:
		return ErrNotReady
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Subscribe registers a client and returns the current frame, from which the client's changes
// follow without a gap. It waits for the first Publish (AwaitFirst).
func (h *Hub) Subscribe(ctx context.Context) (*Stream, []byte, error) {
	if err := h.AwaitFirst(ctx); err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.limit > 0 && h.connected.Load() >= int64(h.limit) {
		return nil, nil, ErrTooManyClients
	}
	c := NewStream(clientBuffer)
	h.clients[c] = struct{}{}
	h.connected.Add(1)
	h.metrics.SSEClientJoined()
	return c, h.current, nil
}

// Unsubscribe removes a client (idempotent).
func (h *Hub) Unsubscribe(c *Stream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropLocked(c, false)
}

// dropLocked ends c and counts it out; dropped: it did not keep up.
func (h *Hub) dropLocked(c *Stream, dropped bool) {
	if _, ok := h.clients[c]; !ok {
		return
	}
	delete(h.clients, c)
	c.End(errDropped)
	h.left(dropped)
}

// left counts a client out; dropped: it was dropped for not keeping up.
func (h *Hub) left(dropped bool) {
	h.connected.Add(-1)
	h.metrics.SSEClientLeft(dropped)
}

// HandOver hijacks the connection of a plain HTTP/1.1 stream whose head and first frames w has
// written, and gives it to the fan-out's writers (fanout.go); it reports whether it did, and the
// handler then returns. net/http has written the head with Transfer-Encoding: chunked, which the
// writers continue. HTTP/1.0 streams (not chunked), HTTP/2 (no hijacking), TLS (writes must go
// through the TLS connection) and response writers that cannot be hijacked keep their handler's
// goroutine, and are written by w.Pump.
func (h *Hub) HandOver(w *Writer, r *http.Request, c *Stream) bool {
	if !fanoutSupported || r.ProtoMajor != 1 || r.ProtoMinor < 1 || r.TLS != nil {
		return false
	}
	conn, _, err := w.rc.Hijack() // the buffered reader holds nothing of use: a client sends nothing more
	if err != nil {
		return false
	}
	h.adopt(c, conn)
	return true
}

// adopt hands c's stream to the fan-out: conn is its hijacked connection, on which the chunked
// response's head and the current frame are written. The changes queued for c meanwhile are
// written before any later one, so the stream has no gap. If c was dropped meanwhile, conn is
// closed; if the hub is closing, the stream ends cleanly.
func (h *Hub) adopt(c *Stream, conn net.Conn) {
	h.mu.Lock()
	if _, ok := h.clients[c]; !ok || h.closed {
		ending := ok
		h.dropLocked(c, false)
		h.mu.Unlock()
		if ending {
			_ = conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
			_, _ = conn.Write(lastChunk)
		}
		_ = conn.Close()
		return
	}
	defer h.mu.Unlock()
	delete(h.clients, c) // still connected: it moves, its count stays
	var pending []byte
	for len(c.frames) > 0 {
		pending = appendChunk(pending, <-c.frames)
	}
	if h.fan == nil {
		h.fan = newFanout(h.keepAlive, h.left)
	}
	h.fan.add(conn, pending)
}

// Close ends every stream of the fan-out cleanly, after a complete frame, and stops its
// goroutines; http.Server.Shutdown neither tracks nor ends hijacked connections. Streams handed
// over later end at once. Every call returns once the streams have ended.
func (h *Hub) Close() {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		fan := h.fan
		h.closed = true
		h.mu.Unlock()
		if fan != nil {
			fan.close()
		}
	})
}
