package server

import (
	"errors"
	"net/http"
	"time"

	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// sseWriteTimeout bounds one write to an SSE client: a client that stops reading is cut off.
const sseWriteTimeout = 10 * time.Second

// serveEvents is GET /v1/events: the SSE stream of the election. The first event is
// "current"; later events are "change", sent only when the holder or the fence changes; a
// comment line keeps the connection alive every keepAlive.
//
// After the first event, an HTTP/1.1 stream is handed to the hub's writers and the handler
// returns (handOver); other streams are served here until they end.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	if headStream(w, r) {
		return
	}
	rc := http.NewResponseController(w)
	sub, current, err := s.hub.subscribe(r.Context())
	switch {
	case errors.Is(err, errTooManyClients):
		wire.WriteRetryable(w, r, "too_many_clients", "this server has reached its limit of SSE clients",
			"retry later or connect to another replica")
		return
	case errors.Is(err, errNotRead):
		wire.WriteRetryable(w, r, "not_ready", err.Error(), "the store cannot be read; see /readyz")
		return
	case err != nil: // the client went away
		return
	}

	setStreamHeaders(w.Header())
	w.Header().Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)

	if err := s.writeSSE(w, rc, current); err != nil {
		s.hub.unsubscribe(sub)
		return
	}
	if s.handOver(rc, r, sub) {
		return
	}
	defer s.hub.unsubscribe(sub)
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

// handOver hijacks the connection of a plain HTTP/1.1 stream and gives it to the hub's writers
// (fanout.go), and reports whether it did. net/http has written the head with
// Transfer-Encoding: chunked, which the writers continue. HTTP/1.0 streams (not chunked),
// HTTP/2 (no hijacking), TLS (writes must go through the TLS connection) and response writers
// that cannot be hijacked keep this goroutine.
func (s *Server) handOver(rc *http.ResponseController, r *http.Request, sub *subscriber) bool {
	if !fanoutSupported || r.ProtoMajor != 1 || r.ProtoMinor < 1 || r.TLS != nil {
		return false
	}
	conn, _, err := rc.Hijack() // the buffered reader holds nothing of use: a client sends nothing more
	if err != nil {
		return false
	}
	s.hub.adopt(sub, conn, s.opts.KeepAlive)
	return true
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
