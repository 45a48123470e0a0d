package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// recoverPanics turns a panic in a handler into a logged 500 in the one error shape, with the
// request's ID in both, instead of a bare 500 and a stack on stderr. http.ErrAbortHandler keeps
// its meaning (abort the response silently).
func recoverPanics(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					answerPanic(log, w, r, wire.RequestID(r.Context()), v)
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// answerPanic is recoverPanics' answer to the panic v of the request requestID.
func answerPanic(log *slog.Logger, w http.ResponseWriter, r *http.Request, requestID string, v any) {
	if v == http.ErrAbortHandler {
		panic(v)
	}
	log.Error("handler panic", "request_id", requestID, "method", r.Method, "path", r.URL.Path,
		"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	wire.WriteJSON(w, http.StatusInternalServerError, wire.NewErrorFor(requestID, http.StatusInternalServerError, "internal_error", "internal error",
		"see the server log for "+requestID))
}
