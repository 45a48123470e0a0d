package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// hub fans one watcher's snapshots out to every SSE client of the process. Each change is
// encoded once and the same frame goes to every client; renewals update the current state
// (for /v1/state and new subscribers) without waking any client. Broadcasting never blocks, and
// a client that does not keep up is dropped (it reconnects and gets the current state), so one
// slow client cannot slow the others.
//
// A client is first a subscriber, served by its handler goroutine from a channel. HTTP/1.1
// streams are then handed over (adopt) to the fan-out, whose few writer goroutines write them
// directly to their connections (fanout.go); the others (HTTP/2, TLS, platforms without the
// fan-out) stay subscribers.
type hub struct {
	mu      sync.Mutex
	clients map[*subscriber]struct{} // served by their handler goroutines
	current lease.Snapshot
	// currentFrame is the "current" event of the newest snapshot, ready for new subscribers.
	currentFrame []byte
	ready        chan struct{} // closed once the first snapshot is known
	limit        int
	metrics      *Metrics
	// connected counts every client, subscriber or fan-out stream, against limit. It is
	// raised under mu; the fan-out's writers lower it without mu.
	connected atomic.Int64
	fan       *fanout // started by the first adoption
	closed    bool    // closeStreams was called: no more adoptions
	closeOnce sync.Once
}

// subscriber is one SSE client's queue of encoded "change" frames.
type subscriber struct {
	ch      chan []byte
	dropped chan struct{}
}

// clientBuffer is how many changes a client may lag behind before it is dropped.
const clientBuffer = 16

func newHub(limit int, m *Metrics) *hub {
	return &hub{clients: map[*subscriber]struct{}{}, ready: make(chan struct{}), limit: limit, metrics: m}
}

// run feeds the hub from the election's watch until ctx ends.
func (h *hub) run(ctx context.Context, snaps <-chan lease.Snapshot) {
	first := true
	for s := range snaps {
		current := encodeEvent("current", s)
		var change []byte
		h.mu.Lock()
		if !first && lease.Changed(h.current, s) {
			change = encodeEvent("change", s)
		}
		h.current, h.currentFrame = s, current
		if first {
			close(h.ready)
			first = false
		}
		if change != nil {
			for c := range h.clients {
				select {
				case c.ch <- change:
				default:
					h.dropLocked(c)
					h.metrics.sseDropped.Inc()
				}
			}
			if h.fan != nil && !h.closed {
				h.fan.broadcast(appendChunk(nil, change))
			}
		}
		h.mu.Unlock()
		h.metrics.observed(s)
	}
}

// encodeEvent is one SSE frame carrying the State of s.
func encodeEvent(event string, s lease.Snapshot) []byte {
	data, err := json.Marshal(StateOf(s))
	if err != nil { // State has only plain fields: cannot happen
		panic("server: encode state: " + err.Error())
	}
	return fmt.Appendf(nil, "event: %s\ndata: %s\n\n", event, data)
}

// firstReadWait bounds how long a request waits for the watcher's first read of the store:
// a replica that cannot read its store answers 503 instead of hanging.
const firstReadWait = 5 * time.Second

// errNotRead: the watcher has not read the election yet.
var errNotRead = errors.New("the election has not been read from the store yet")

// awaitFirst waits for the first snapshot, at most firstReadWait.
func (h *hub) awaitFirst(ctx context.Context) error {
	t := time.NewTimer(firstReadWait)
	defer t.Stop()
	select {
	case <-h.ready:
		return nil
	case <-t.C:
		return errNotRead
	case <-ctx.Done():
		return ctx.Err()
	}
}

// snapshot waits for the first snapshot and returns the newest.
func (h *hub) snapshot(ctx context.Context) (lease.Snapshot, error) {
	if err := h.awaitFirst(ctx); err != nil {
		return lease.Snapshot{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.current, nil
}

// errTooManyClients: the hub is at its client limit.
var errTooManyClients = errors.New("too many SSE clients")

// subscribe registers a client and returns the "current" frame, from which the client's
// changes follow without a gap.
func (h *hub) subscribe(ctx context.Context) (*subscriber, []byte, error) {
	if err := h.awaitFirst(ctx); err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.limit > 0 && h.connected.Load() >= int64(h.limit) {
		return nil, nil, errTooManyClients
	}
	c := &subscriber{ch: make(chan []byte, clientBuffer), dropped: make(chan struct{})}
	h.clients[c] = struct{}{}
	h.connected.Add(1)
	h.metrics.sseClients.Inc()
	return c, h.currentFrame, nil
}

// unsubscribe removes a client (idempotent).
func (h *hub) unsubscribe(c *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropLocked(c)
}

func (h *hub) dropLocked(c *subscriber) {
	if _, ok := h.clients[c]; !ok {
		return
	}
	delete(h.clients, c)
	close(c.dropped)
	h.left(false)
}

// left counts a client out; slow: it was dropped for not keeping up.
func (h *hub) left(slow bool) {
	h.connected.Add(-1)
	h.metrics.sseClients.Dec()
	if slow {
		h.metrics.sseDropped.Inc()
	}
}

// adopt hands sub's stream to the fan-out: conn is its hijacked connection, on which the
// chunked response's head and the "current" event are written. The changes queued for sub
// meanwhile are written before any later one, so the stream has no gap. If sub was dropped
// meanwhile, conn is closed; if the server is shutting down, the stream ends cleanly.
func (h *hub) adopt(sub *subscriber, conn net.Conn, keepAlive time.Duration) {
	h.mu.Lock()
	if _, ok := h.clients[sub]; !ok || h.closed {
		ending := ok
		h.dropLocked(sub)
		h.mu.Unlock()
		if ending {
			_ = conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
			_, _ = conn.Write(lastChunk)
		}
		_ = conn.Close()
		return
	}
	defer h.mu.Unlock()
	delete(h.clients, sub) // still connected: it moves, its count stays
	var pending []byte
	for len(sub.ch) > 0 {
		pending = appendChunk(pending, <-sub.ch)
	}
	if h.fan == nil {
		h.fan = newFanout(keepAlive, h.left)
	}
	h.fan.add(conn, pending)
}

// closeStreams ends every stream of the fan-out cleanly, after a complete frame, and stops
// its goroutines; http.Server.Shutdown neither tracks nor ends hijacked connections. Streams
// adopted later end at once. Every call returns once the streams have ended.
func (h *hub) closeStreams() {
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
