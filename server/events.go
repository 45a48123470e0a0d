package server

import (
	"errors"
	"net/http"
	"time"
)

// sseWriteTimeout bounds one write to an SSE client: a client that stops reading is cut off.
const sseWriteTimeout = 10 * time.Second

// serveEvents is GET /v1/events: the SSE stream of the election. The first event is
// "current"; later events are "change", sent only when the holder or the fence changes; a
// comment line keeps the connection alive every keepAlive.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	sub, current, err := s.hub.subscribe(r.Context())
	switch {
	case errors.Is(err, errTooManyClients):
		writeRetryable(w, r, "too_many_clients", "this server has reached its limit of SSE clients",
			"retry later or connect to another replica")
		return
	case errors.Is(err, errNotRead):
		writeRetryable(w, r, "not_ready", err.Error(), "the store cannot be read; see /readyz")
		return
	case err != nil: // the client went away
		return
	}
	defer s.hub.unsubscribe(sub)

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no") // nginx and compatible proxies: do not buffer the stream
	w.WriteHeader(http.StatusOK)

	if err := s.writeSSE(w, rc, current); err != nil {
		return
	}
	keepAlive := time.NewTicker(s.opts.KeepAlive)
	defer keepAlive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		case <-sub.dropped:
			return
		case frame := <-sub.ch:
			if err := s.writeSSE(w, rc, frame); err != nil {
				return
			}
		case <-keepAlive.C:
			if err := s.writeSSE(w, rc, keepAliveFrame); err != nil {
				return
			}
		}
	}
}

// keepAliveFrame is an SSE comment: it keeps proxies and clients from timing the stream out.
var keepAliveFrame = []byte(": keep-alive\n\n")

// writeSSE writes one frame and flushes it, within sseWriteTimeout.
func (s *Server) writeSSE(w http.ResponseWriter, rc *http.ResponseController, frame []byte) error {
	_ = rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	if _, err := w.Write(frame); err != nil {
		return err
	}
	return rc.Flush()
}
