package server

import (
	"io"
	"net/http"

	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// front is the server's handler: what every request passes before the router. It gives the
// request its ID and answers CORS — in that order, so that a preflight answered by CORS has its
// ID too — and then lets the elections fast path (elections_fast.go) serve it if it can; every
// other request goes to the router, with its ID in its context for the router's handlers.
//
// The fast path exists because the router's way cost about as much CPU as the engine itself:
// chi's route context and path values, the ID's context, huma's reflection over inputs and
// outputs and its second decoding of the body, each an allocation or several on every request.
type front struct {
	// cors is dispatch behind the CORS handling (withCORS).
	cors http.Handler
	// fast serves the hot elections operations; nil without the elections API.
	fast *elections
	// router serves everything else, and whatever the fast path leaves.
	router http.Handler
}

func newFront(corsOrigins []string, fast *elections, router http.Handler) *front {
	f := &front{fast: fast, router: router}
	f.cors = withCORS(corsOrigins)(http.HandlerFunc(f.dispatch))
	return f
}

// ServeHTTP implements http.Handler.
func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	wire.SetRequestID(w)
	f.cors.ServeHTTP(w, r)
}

func (f *front) dispatch(w http.ResponseWriter, r *http.Request) {
	id := wire.RequestIDOf(w)
	var body io.ReadCloser
	if f.fast != nil {
		var served bool
		if served, body = f.fast.serveFast(w, r, id); served {
			return
		}
	}
	r = wire.WithRequestID(r, id)
	if body != nil {
		r.Body = body // what the fast path read of it, and the rest
	}
	f.router.ServeHTTP(w, r)
}
