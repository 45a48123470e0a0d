package server

import (
	"io"
	"log/slog"
	"net/http"

	"github.com/regbo/lfp-swarm-lease/server/elections"
	"github.com/regbo/lfp-swarm-lease/server/middleware"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// front is the server's handler. Every request passes the middleware — its ID, the answer to a
// panic, CORS, in that order, so that a preflight answered by CORS has its ID too — and then
// route: the elections fast path serves it if it can, and every other request goes to the
// router, with its ID in its context for the router's handlers.
//
// The fast path runs ahead of the router because the router's way cost about as much CPU as the
// engine itself: chi's route context and path values, the ID's context, huma's reflection over
// inputs and outputs and its second decoding of the body, each an allocation or several on
// every request.
type front struct {
	// chain is route behind the middleware.
	chain http.Handler
	// fast serves the hot elections operations; nil without the elections API.
	fast *elections.API
	// router serves everything else, and whatever the fast path leaves.
	router http.Handler
}

var _ http.Handler = (*front)(nil)

func newFront(log *slog.Logger, corsOrigins []string, fast *elections.API, router http.Handler) *front {
	f := &front{fast: fast, router: router}
	f.chain = middleware.RequestID(middleware.Recoverer(log)(middleware.CORS(corsOrigins)(http.HandlerFunc(f.route))))
	return f
}

// ServeHTTP implements http.Handler.
func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) { f.chain.ServeHTTP(w, r) }

// route hands the request to the fast path, else to the router.
func (f *front) route(w http.ResponseWriter, r *http.Request) {
	id := wire.RequestIDOf(w)
	var body io.ReadCloser
	if f.fast != nil {
		var served bool
		if served, body = f.fast.ServeFast(w, r, id); served {
			return
		}
	}
	r = wire.WithRequestID(r, id)
	if body != nil {
		r.Body = body // what the fast path read of it, and the rest
	}
	f.router.ServeHTTP(w, r)
}
