package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
)

type requestIDKey struct{}

// RequestIDHeader is the response header naming the request's ID.
const RequestIDHeader = "X-Request-Id"

// RequestID returns the request's ID ("req_" + 32 hex digits), or "" outside a request.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// Every request gets a fresh random ID, in the X-Request-Id response header (set by the front,
// before anything else can answer) and, for the router's handlers, in its context. An ID sent
// by the client is not trusted (it would let clients forge log correlation); it is ignored.

// setRequestID gives the request answered through w a fresh ID, in its X-Request-Id header,
// and returns it.
func setRequestID(w http.ResponseWriter) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	// One allocation for the id (a concatenation after hex's string made two), and the header
	// set under its canonical key without Set's canonicalisation.
	buf := [len("req_") + 2*len(b)]byte{'r', 'e', 'q', '_'}
	hex.Encode(buf[len("req_"):], b[:])
	id := string(buf[:])
	w.Header()[RequestIDHeader] = []string{id}
	return id
}

// requestIDOf is the ID setRequestID gave the request answered through w. Between the front
// and the router the ID lives in the header alone (withCORS sits between them and passes no
// values), so that the elections fast path needs no context of its own.
func requestIDOf(w http.ResponseWriter) string {
	if ids := w.Header()[RequestIDHeader]; len(ids) > 0 {
		return ids[0]
	}
	return ""
}

// withRequestIDContext is r with its ID in its context, for RequestID.
func withRequestIDContext(r *http.Request, id string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
}
