// Package sse is the server-sent events engine of both APIs' streams, GET /v1/events and GET
// /elections/{id}/watch: the frames (Event), a client's bounded queue of frames (Stream), the
// one writer of a stream's frames and keep-alives (Writer), and the Hub that fans one source's
// frames out to many clients — handing HTTP/1.1 streams over to a few writer goroutines that
// write their hijacked connections without blocking (the fan-out).
package sse
