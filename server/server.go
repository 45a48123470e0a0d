package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/connlimit"
	"github.com/regbo/lfp-swarm-lease/server/controller"
	"github.com/regbo/lfp-swarm-lease/server/elections"
	"github.com/regbo/lfp-swarm-lease/server/health"
	"github.com/regbo/lfp-swarm-lease/server/wire"
	"github.com/regbo/lfp-swarm-lease/timing"
)

// Options configure a Server.
type Options struct {
	// Election is the election the controller endpoints serve. Nil serves no controller
	// endpoints (an elections-only server); Election or Elections is required.
	Election *lease.Election
	// Elections, when set, serves the elections ("rooms") API.
	Elections *elections.Options
	// Ready, when set without Election or Elections, is the readiness /readyz reports for a
	// server of health and metrics only (run --server: whether its elections server answers).
	Ready func(context.Context) error
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
	// CORS headers (middleware.CORS).
	CORSAllowedOrigins []string
	// Snapshots, when set, feeds the server instead of a watcher of its own: `run` passes its
	// contender's reads, so that a replica reads the store once, not twice. The owner closes it.
	Snapshots <-chan lease.Snapshot
}

// Server serves the HTTP API of one election, the elections API, or both.
type Server struct {
	opts    Options
	handler *front
	api     huma.API
	// controller serves the election's endpoints; nil without an election.
	controller *controller.Controller
	// health answers /healthz and /readyz; monitor: it also checks readiness by itself.
	health  *health.Checks
	monitor bool
	// conns bounds the open connections.
	conns *connlimit.Limiter
	// closing is closed when the server shuts down: the streams its handlers write end.
	closing chan struct{}
}

// readinessInterval is how often a server that reads its store itself checks that the store
// is ready: the first gap of timing.Failures' reports, so that each report is on time.
const readinessInterval = timing.FirstReportGap

// Defaults of Options.
const (
	// DefaultKeepAlive is the SSE keep-alive interval.
	DefaultKeepAlive = 15 * time.Second
	// DefaultMaxSSEClients bounds the connected clients of /v1/events.
	DefaultMaxSSEClients = 20000
	// DefaultMaxBodyBytes bounds request bodies.
	DefaultMaxBodyBytes = 64 << 10
)

// applyDefaults fills the zero options.
func (o *Options) applyDefaults() {
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.MaxSSEClients <= 0 {
		o.MaxSSEClients = DefaultMaxSSEClients
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
	o.Logger = cmp.Or(o.Logger, slog.Default())
	o.Version = cmp.Or(o.Version, "dev")
}

// New builds the server; Serve runs it. The program must have installed the API's error model
// (wire.InstallErrorModel) first: without it huma would answer its own errors in another shape,
// and document that shape.
func New(opts Options) (*Server, error) {
	if !wire.ErrorModelInstalled() {
		return nil, errors.New("server: huma's error model is not installed: call wire.InstallErrorModel once, at start")
	}
	if opts.Election == nil && opts.Elections == nil && opts.Ready == nil {
		return nil, errors.New("server: an election, the elections API or a readiness check is required")
	}
	opts.applyDefaults()
	var proxies []netip.Prefix
	var roomsManager *rooms.Manager
	if opts.Elections != nil {
		proxies, roomsManager = opts.Elections.TrustedProxies, opts.Elections.Rooms
	}
	conns, err := connlimit.New(connlimit.Options{MaxConnections: opts.MaxConnections,
		MaxConnectionsPerClient: opts.MaxConnectionsPerClient, TrustedProxies: proxies, Metrics: opts.Metrics})
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, conns: conns, closing: make(chan struct{}),
		// A server that reads the store itself (serve) says when it is not ready; run's
		// contender reads it for run's, and logs its failures itself.
		monitor: opts.Snapshots == nil && (opts.Election != nil || opts.Elections != nil)}

	r := newRouter(opts.MaxBodyBytes)
	s.api = newAPI(r)
	ready := opts.Ready
	if opts.Election != nil || opts.Elections != nil {
		ready = nil // the store's readiness
	}
	s.health = health.New(health.Options{Election: opts.Election, Rooms: roomsManager, Ready: ready, Metrics: opts.Metrics, Logger: opts.Logger})
	s.health.Register(s.api)
	if opts.Election != nil {
		s.controller = controller.New(controller.Options{Election: opts.Election, Snapshots: opts.Snapshots,
			PollInterval: opts.PollInterval, KeepAlive: opts.KeepAlive, MaxClients: opts.MaxSSEClients, Version: opts.Version,
			Closing: s.closing, Metrics: opts.Metrics, Logger: opts.Logger})
		s.controller.Register(s.api, r)
	} else if opts.Elections != nil {
		opts.Metrics.withoutElection()
		routeNoElection(r)
	}
	var fast *elections.API
	if opts.Elections != nil {
		fast, err = elections.New(*opts.Elections, elections.Host{MaxBodyBytes: opts.MaxBodyBytes, PollInterval: opts.PollInterval,
			KeepAlive: opts.KeepAlive, Closing: s.closing, Metrics: opts.Metrics, Logger: opts.Logger})
		if err != nil {
			return nil, err
		}
		fast.Register(s.api, r)
	}
	routeServerPages(r, opts.Metrics)
	s.handler = newFront(opts.Logger, opts.CORSAllowedOrigins, fast, r)
	return s, nil
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
	if s.monitor {
		monitorCtx, stopMonitor := context.WithCancel(ctx)
		defer stopMonitor()
		go s.health.Monitor(monitorCtx, readinessInterval)
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
