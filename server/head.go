package server

import "net/http"

// HEAD works on every GET endpoint: chi's middleware.GetHead routes a HEAD request to the GET
// handler, and net/http sends that handler's status and headers (Content-Length included) but
// drops its body. The streams (/v1/events, /elections/{id}/watch) answer HEAD themselves
// with headStream, after the checks that need no stream.

// setStreamHeaders sets the headers of an SSE stream's response.
func setStreamHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no") // nginx and compatible proxies: do not buffer the stream
}

// headStream answers a HEAD request to a stream: the status and headers a GET gets when its
// stream opens, without opening one — no client slot taken, no store read, no body.
func headStream(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodHead {
		return false
	}
	setStreamHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	return true
}
