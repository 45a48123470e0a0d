package controller

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/server/sse"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// events is the election as its watcher last read it: the newest snapshot, for /v1/state, and
// the /v1/events stream of it, fanned out by a hub.
type events struct {
	hub       *sse.Hub
	keepAlive time.Duration
	closing   <-chan struct{}

	mu        sync.Mutex
	current   lease.Snapshot
	published bool
}

// errNotRead: the watcher has not read the election yet.
var errNotRead = errors.New("the election has not been read from the store yet")

func newEvents(maxClients int, keepAlive time.Duration, closing <-chan struct{}, m sse.Metrics) *events {
	return &events{hub: sse.NewHub(maxClients, keepAlive, m), keepAlive: keepAlive, closing: closing}
}

// publish makes snap the newest snapshot: the "current" event of new subscribers, and, when it
// changes the holder or the fence, a "change" event for every client. Renewals update the
// current state (for /v1/state and new subscribers) without waking any client.
func (ev *events) publish(snap lease.Snapshot) {
	current := stateEvent("current", snap)
	var change []byte
	ev.mu.Lock()
	if ev.published && lease.Changed(ev.current, snap) {
		change = stateEvent("change", snap)
	}
	ev.current, ev.published = snap, true
	ev.mu.Unlock()
	ev.hub.Publish(current, change)
}

// stateEvent is the SSE event named name that carries the State of snap.
func stateEvent(name string, snap lease.Snapshot) []byte {
	data, err := json.Marshal(StateOf(snap))
	if err != nil { // State has only plain fields: cannot happen
		panic("controller: encode state: " + err.Error())
	}
	return sse.Event(name, 0, data)
}

// snapshot waits for the first snapshot (at most sse.FirstFrameWait) and returns the newest.
func (ev *events) snapshot(ctx context.Context) (lease.Snapshot, error) {
	if err := ev.hub.AwaitFirst(ctx); err != nil {
		return lease.Snapshot{}, err
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return ev.current, nil
}

// serve is GET /v1/events: the SSE stream of the election. The first event is "current";
// later events are "change", sent only when the holder or the fence changes; a comment line
// keeps the connection alive every keepAlive.
//
// After the first event, an HTTP/1.1 stream is handed to the hub's writers and the handler
// returns (sse.Hub.HandOver); other streams are served here until they end.
func (ev *events) serve(w http.ResponseWriter, r *http.Request) {
	if sse.Head(w, r) {
		return
	}
	sub, current, err := ev.hub.Subscribe(r.Context())
	switch {
	case errors.Is(err, sse.ErrTooManyClients):
		wire.WriteRetryable(w, r, "too_many_clients", "this server has reached its limit of SSE clients",
			"retry later or connect to another replica")
		return
	case errors.Is(err, sse.ErrNotReady):
		wire.WriteRetryable(w, r, "not_ready", errNotRead.Error(), "the store cannot be read; see /readyz")
		return
	case err != nil: // the client went away
		return
	}

	w.Header().Set("Connection", "keep-alive")
	stream := sse.Open(w)
	if err := stream.Write(current); err != nil {
		ev.hub.Unsubscribe(sub)
		return
	}
	if ev.hub.HandOver(stream, r, sub) {
		return
	}
	defer ev.hub.Unsubscribe(sub)
	stream.Pump(r.Context(), sub, ev.keepAlive, ev.closing)
}
