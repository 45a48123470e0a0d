package middleware

import (
	"net/http"

	"github.com/go-chi/cors"
)

// corsMaxAge is how long a browser may cache a preflight answer, in seconds.
const corsMaxAge = 600

// CORS answers cross-origin requests from the allowed origins — preflights included — so
// that a page served elsewhere (a dashboard, the hosted rooms service's own page pointed at this
// server) can create rooms, campaign and watch, SSE included. The middleware only sets headers:
// the writer passed on is the server's own, so streams still flush. Leader tokens travel in
// bodies, never in cookies, so credentials stay off. No origins: no CORS headers at all.
func CORS(origins []string) func(http.Handler) http.Handler {
	if len(origins) == 0 {
		return func(next http.Handler) http.Handler { return next }
	}
	return cors.Handler(cors.Options{
		AllowedOrigins: origins,
		AllowedMethods: []string{http.MethodGet, http.MethodHead, http.MethodPost},
		// Cache-Control: the clients' event streams send no-cache, which is not a
		// CORS-safelisted header, so a watch from another origin is preflighted for it.
		AllowedHeaders: []string{"Content-Type", "Last-Event-ID", "Cache-Control"},
		// What a page needs of the answers: the request id to report, when to retry.
		ExposedHeaders: []string{"X-Request-Id", "Retry-After"},
		MaxAge:         corsMaxAge,
	})
}
