package middleware

import (
	"net/http"

	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// RequestID gives every request a fresh ID (wire.SetRequestID) in its X-Request-Id response
// header, before anything else can answer: it goes first. The ID is in the header alone, so that
// the elections fast path answers without a context of its own; the server puts it in the
// request's context (wire.WithRequestID) for the router's handlers.
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wire.SetRequestID(w)
		next.ServeHTTP(w, r)
	})
}
