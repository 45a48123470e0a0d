package middleware

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// Recoverer turns a panic in a handler into a logged 500 in the one error shape, with the
// request's ID in both, instead of a bare 500 and a stack on stderr. It goes right after
// RequestID, whose ID it reads from the answer's header: it covers the elections fast path,
// which runs ahead of the router, as well as the router's handlers. http.ErrAbortHandler keeps
// its meaning (abort the response silently).
func Recoverer(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					answerPanic(log, w, r, v)
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// answerPanic is Recoverer's answer to the panic v.
func answerPanic(log *slog.Logger, w http.ResponseWriter, r *http.Request, v any) {
	if v == http.ErrAbortHandler {
		panic(v)
	}
	requestID := wire.RequestIDOf(w)
	log.Error("handler panic", "request_id", requestID, "method", r.Method, "path", r.URL.Path,
		"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	wire.WriteJSON(w, http.StatusInternalServerError, wire.NewErrorFor(requestID, http.StatusInternalServerError, "internal_error", "internal error",
		"see the server log for "+requestID))
}
