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

// withRequestID gives every request a fresh random ID, in its context and in the X-Request-Id
// response header. An ID sent by the client is not trusted (it would let clients forge log
// correlation); it is ignored.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [16]byte
		_, _ = rand.Read(b[:])
		// One allocation for the id (a concatenation after hex's string made two), and the
		// header set under its canonical key without Set's canonicalisation.
		buf := [len("req_") + 2*len(b)]byte{'r', 'e', 'q', '_'}
		hex.Encode(buf[len("req_"):], b[:])
		id := string(buf[:])
		w.Header()[RequestIDHeader] = []string{id}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}
