package controller

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/server/sse"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// errNotRead: the watcher has not read the election yet.
var errNotRead = errors.New("the election has not been read from the store yet")

// feed publishes the election's snapshots to the hub until snaps closes: every snapshot becomes
// the "current" event of new subscribers, and one that changes the holder or the fence a
// "change" event for every client. Renewals update the current state (for /v1/state and new
// subscribers) without waking any client.
func (c *Controller) feed(snaps <-chan lease.Snapshot) {
	first := true
	for snap := range snaps {
		current := stateEvent("current", snap)
		var change []byte
		c.mu.Lock()
		if !first && lease.Changed(c.current, snap) {
			change = stateEvent("change", snap)
		}
		c.current = snap
		c.mu.Unlock()
		first = false
		c.hub.Publish(current, change)
		c.opts.Metrics.ObservedFence(snap.Fence)
	}
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
func (c *Controller) snapshot(ctx context.Context) (lease.Snapshot, error) {
	if err := c.hub.AwaitFirst(ctx); err != nil {
		return lease.Snapshot{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.current, nil
}

// serveEvents is GET /v1/events: the SSE stream of the election. The first event is
// "current"; later events are "change", sent only when the holder or the fence changes; a
// comment line keeps the connection alive every keepAlive.
//
// After the first event, an HTTP/1.1 stream is handed to the hub's writers and the handler
// returns (sse.Hub.HandOver); other streams are served here until they end.
func (c *Controller) serveEvents(w http.ResponseWriter, r *http.Request) {
	if sse.Head(w, r) {
		return
	}
	sub, current, err := c.hub.Subscribe(r.Context())
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
		c.hub.Unsubscribe(sub)
		return
	}
	if c.hub.HandOver(stream, r, sub) {
		return
	}
	defer c.hub.Unsubscribe(sub)
	stream.Pump(r.Context(), sub, c.opts.KeepAlive, c.opts.Closing)
}
