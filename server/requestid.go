package server

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
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
//
// An ID correlates an answer with the server's logs; it grants nothing and guards nothing, so
// it needs to be unique, not unpredictable. Its 128 bits come from math/rand/v2's generator
// (the runtime's ChaCha8, seeded from the operating system's randomness, per thread): as
// unlikely to repeat as crypto/rand's, without a read of the kernel's generator on every
// request.

// setRequestID gives the request answered through w a fresh ID, in its X-Request-Id header,
// and returns it.
func setRequestID(w http.ResponseWriter) string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
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
