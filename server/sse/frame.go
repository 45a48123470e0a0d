package sse

import (
	"net/http"
	"strconv"
	"time"
)

// Event is the frame of one SSE event: its name, the reconnection delay when retry is positive,
// and data, which must be one line (JSON as encoding/json writes it is).
func Event(name string, retry time.Duration, data []byte) []byte {
	b := make([]byte, 0, len("event: \nretry: 0000\ndata: \n\n")+len(name)+len(data))
	b = append(append(append(b, "event: "...), name...), '\n')
	if retry > 0 {
		b = append(strconv.AppendInt(append(b, "retry: "...), retry.Milliseconds(), 10), '\n')
	}
	b = append(append(append(b, "data: "...), data...), "\n\n"...)
	return b
}

// keepAliveFrame is an SSE comment: it keeps proxies and clients from timing the stream out.
var keepAliveFrame = []byte(": keep-alive\n\n")

// HEAD works on every GET endpoint: chi's middleware.GetHead routes a HEAD request to the GET
// handler, and net/http sends that handler's status and headers (Content-Length included) but
// drops its body. The streams answer HEAD themselves with Head, after the checks that need no
// stream.

// setStreamHeaders sets the headers of an SSE stream's response.
func setStreamHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no") // nginx and compatible proxies: do not buffer the stream
}

// Head answers a HEAD request to a stream, and reports whether r was one: the status and
// headers a GET gets when its stream opens, without opening one — no client slot taken, no
// store read, no body.
func Head(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodHead {
		return false
	}
	setStreamHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	return true
}
