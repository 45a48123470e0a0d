package server

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"
	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/swaggest/swgui/v5emb"

	"github.com/regbo/lfp-swarm-lease/server/elections"
	"github.com/regbo/lfp-swarm-lease/server/middleware"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// APIVersion is the version of the HTTP contract (info.version of the OpenAPI document): the
// product's one version, which `bun run release` sets here and in clients/openapi.json with the
// other version files (release/internal/versionfiles), so that /docs never names another.
const APIVersion = "0.1.0"

// newRouter is the router behind the front, with the middleware that needs a route: the body
// limit, and HEAD for every GET endpoint.
func newRouter(maxBodyBytes int64) chi.Router {
	r := chi.NewRouter()
	// The request's ID, the answer to a panic and CORS come first, in the front.
	r.Use(middleware.BodyLimit(maxBodyBytes), chimw.GetHead) // HEAD: see sse.Head
	// Neither answer echoes the path: a segment of it may be a leader token sent to the wrong
	// place (POST /elections/ROOM/<token>), and errors never carry tokens.
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		wire.WriteError(w, r, http.StatusNotFound, "not_found", "no such endpoint", "see /docs/ for the endpoints")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		wire.WriteError(w, r, http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed",
			"the endpoint exists; see /docs/ for the methods it takes")
	})
	return r
}

// newAPI is the huma API on r: OpenAPI 3.1 at /openapi.json (and .yaml), no built-in docs
// (they load assets from a CDN; /docs serves embedded ones), no $schema links in bodies.
func newAPI(r chi.Router) huma.API {
	cfg := huma.DefaultConfig("lfp-swarm-lease", APIVersion)
	cfg.Info.Description = "Leader election for Docker Swarm services, with fencing tokens: the controller endpoints of one " +
		"Swarm election, and the elections (rooms) API for processes without Docker access."
	cfg.DocsPath = ""
	cfg.SchemasPath = ""
	cfg.CreateHooks = nil
	// The API's JSON: bodies read by wire.Decode, answers written as the elections fast path
	// writes them.
	format := huma.Format{Marshal: elections.Marshal, Unmarshal: wire.Decode}
	cfg.Formats = map[string]huma.Format{"application/json": format, "json": format}
	return humachi.New(r, cfg)
}

// routeServerPages routes what the server serves beside the APIs: the metrics, and the
// interactive docs, where a browser pointed at the server lands.
func routeServerPages(r chi.Router, m *Metrics) {
	r.Method(http.MethodGet, "/metrics", promhttp.HandlerFor(m.Registry(), promhttp.HandlerOpts{}))
	docs := v5emb.New("lfp-swarm-lease API", "/openapi.json", "/docs/")
	r.Get("/docs", http.RedirectHandler("/docs/", http.StatusMovedPermanently).ServeHTTP)
	r.Get("/", http.RedirectHandler("/docs/", http.StatusFound).ServeHTTP)
	r.Method(http.MethodGet, "/docs/*", docs)
}

// routeNoElection says why the controller endpoints of a server without an election do not
// exist, rather than the generic "no such endpoint" (and never echoes the path).
func routeNoElection(r chi.Router) {
	r.Get("/v1/*", func(w http.ResponseWriter, r *http.Request) {
		wire.WriteError(w, r, http.StatusNotFound, "no_namespace", "this server serves no election namespace",
			"the /v1/* endpoints need one: start serve with a namespace (--namespace, or SWARM_LEASE_NAMESPACE); the elections API is at /elections")
	})
}
