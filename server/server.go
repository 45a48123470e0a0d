package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"
	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/swaggest/swgui/v5emb"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/connlimit"
	"github.com/regbo/lfp-swarm-lease/server/controller"
	"github.com/regbo/lfp-swarm-lease/server/elections"
	"github.com/regbo/lfp-swarm-lease/server/health"
	"github.com/regbo/lfp-swarm-lease/server/middleware"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// Options configure a Server.
type Options struct {
	// Election is the election the controller endpoints serve. Nil serves no controller
	// endpoints (an elections-only server); Election or Elections is required.
	Election *lease.Election
	// Elections, when set, serves the elections ("rooms") API.
	Elections *elections.Options
	// Version is the product version reported by /v1/info and the contract.
	Version string
	// PollInterval is the watcher's poll interval (default 1 s).
	PollInterval time.Duration
	// KeepAlive is the SSE keep-alive interval (default 15 s).
	KeepAlive time.Duration
	// MaxSSEClients bounds the connected SSE clients (default 20,000; 0 keeps the default).
	MaxSSEClients int
	// MaxBodyBytes bounds request bodies (default 64 KiB).
	MaxBodyBytes int64
	// MaxConnections bounds the open HTTP connections, hijacked streams included (default:
	// connlimit.Capacity, the descriptor limit less a reserve for the store and the process).
	// At the bound a connection waiting for a request is closed to admit a new one (package
	// connlimit).
	MaxConnections int
	// MaxConnectionsPerClient bounds the open connections of one client address (IPv6: /64;
	// default a quarter of MaxConnections). Trusted proxies (elections.Options.TrustedProxies)
	// count only against MaxConnections.
	MaxConnectionsPerClient int
	// Metrics receives the server's and the election's measurements (default: new).
	Metrics *Metrics
	// Logger logs server events (default slog.Default()).
	Logger *slog.Logger
	// CORSAllowedOrigins are the origins (scheme://host[:port], or "*" for any) whose pages may
	// call the API from a browser, preflights and SSE included; none (the default) sends no
	// CORS headers (cors.go).
	CORSAllowedOrigins []string
	// Snapshots, when set, feeds the server instead of a watcher of its own: `run` passes its
	// campaign's reads, so that a replica reads the store once, not twice. The owner closes it.
	Snapshots <-chan lease.Snapshot
}

// Server serves the HTTP API of one election.
type Server struct {
	opts    Options
	router  chi.Router
	handler *front
	api     huma.API
	// controller serves the election's endpoints; nil without an election.
	controller *controller.Controller
	elections  *elections.API
	// conns bounds the open connections.
	conns   *connlimit.Limiter
	closing chan struct{}
}

// Defaults.
const (
	DefaultKeepAlive     = 15 * time.Second
	DefaultMaxSSEClients = 20000
	DefaultMaxBodyBytes  = 64 << 10
)

// New builds the server; Serve runs it. The program must have installed the API's error model
// (wire.InstallErrorModel) first: without it huma would answer its own errors in another shape,
// and document that shape.
func New(opts Options) (*Server, error) {
	if !wire.ErrorModelInstalled() {
		return nil, errors.New("server: huma's error model is not installed: call wire.InstallErrorModel once, at start")
	}
	if opts.Election == nil && opts.Elections == nil {
		return nil, errors.New("server: an election or the elections API is required")
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	if opts.MaxSSEClients <= 0 {
		opts.MaxSSEClients = DefaultMaxSSEClients
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &Server{opts: opts, closing: make(chan struct{})}

	var proxies []netip.Prefix
	if opts.Elections != nil {
		proxies = opts.Elections.TrustedProxies
	}
	conns, err := connlimit.New(connlimit.Options{MaxConnections: opts.MaxConnections,
		MaxConnectionsPerClient: opts.MaxConnectionsPerClient, TrustedProxies: proxies, Metrics: opts.Metrics})
	if err != nil {
		return nil, err
	}
	s.conns = conns

	r := chi.NewRouter()
	// The request's ID, the answer to a panic and CORS come first, in the front (front.go).
	r.Use(middleware.BodyLimit(opts.MaxBodyBytes), chimw.GetHead) // HEAD: see head.go
	// Neither answer echoes the path: a segment of it may be a leader token sent to the wrong
	// place (POST /elections/ROOM/<token>), and errors never carry tokens.
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		wire.WriteError(w, r, http.StatusNotFound, "not_found", "no such endpoint", "see /docs/ for the endpoints")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		wire.WriteError(w, r, http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed",
			"the endpoint exists; see /docs/ for the methods it takes")
	})
	s.router = r
	s.api = newAPI(r)
	var roomsManager *rooms.Manager
	if opts.Elections != nil {
		roomsManager = opts.Elections.Rooms
	}
	health.New(health.Options{Election: opts.Election, Rooms: roomsManager, Metrics: opts.Metrics, Logger: opts.Logger}).Register(s.api)
	if opts.Election != nil {
		s.controller = controller.New(controller.Options{Election: opts.Election, Snapshots: opts.Snapshots,
			PollInterval: opts.PollInterval, KeepAlive: opts.KeepAlive, MaxClients: opts.MaxSSEClients, Version: opts.Version,
			Closing: s.closing, Metrics: opts.Metrics, Logger: opts.Logger})
		s.controller.Register(s.api, r)
	} else {
		opts.Metrics.withoutElection()
		// Without an election the controller endpoints do not exist; say why, rather than the
		// generic "no such endpoint" (and never echo the path).
		r.Get("/v1/*", func(w http.ResponseWriter, r *http.Request) {
			wire.WriteError(w, r, http.StatusNotFound, "no_namespace", "this server serves no election namespace",
				"the /v1/* endpoints need one: start serve with a namespace (--namespace, or SWARM_LEASE_NAMESPACE); the elections API is at /elections")
		})
	}
	if opts.Elections != nil {
		e, err := elections.New(*opts.Elections, elections.Host{MaxBodyBytes: opts.MaxBodyBytes, PollInterval: opts.PollInterval,
			KeepAlive: opts.KeepAlive, Closing: s.closing, Metrics: opts.Metrics, Logger: opts.Logger})
		if err != nil {
			return nil, err
		}
		s.elections = e
		e.Register(s.api, r)
	}
	r.Method(http.MethodGet, "/metrics", promhttp.HandlerFor(opts.Metrics.Registry(), promhttp.HandlerOpts{}))
	docs := v5emb.New("lfp-swarm-lease API", "/openapi.json", "/docs/")
	r.Get("/docs", http.RedirectHandler("/docs/", http.StatusMovedPermanently).ServeHTTP)
	r.Get("/", http.RedirectHandler("/docs/", http.StatusFound).ServeHTTP) // a browser pointed at the server lands on the docs
	r.Method(http.MethodGet, "/docs/*", docs)
	s.handler = newFront(opts.Logger, opts.CORSAllowedOrigins, s.elections, r)
	return s, nil
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

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Metrics returns the server's metrics.
func (s *Server) Metrics() *Metrics { return s.opts.Metrics }

// Serve watches the election and serves HTTP on ln until ctx ends, then shuts down
// gracefully: SSE streams end cleanly, other requests get up to 5 s to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.controller != nil {
		watchCtx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		go s.controller.Run(watchCtx)
		defer s.controller.Close() // waits for the hijacked SSE streams' end, which Shutdown does not track
	}

	ln = s.conns.Listener(ln)
	srv := &http.Server{
		Handler:           s.handler,
		ConnState:         s.conns.ConnState,
		ConnContext:       connlimit.ConnContext,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
		// No WriteTimeout: SSE streams are long-lived; their writes are bounded on their own
		// (non-blocking writes for hijacked streams, a deadline per write otherwise).
	}
	srv.RegisterOnShutdown(func() {
		close(s.closing)
		if s.controller != nil {
			s.controller.Close()
		}
	})
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
	}
	return nil
}
