// Package serve is `demo serve`: the page, the ledger API and the proxy to the controller.
//
// It listens on two addresses. The page's (published by the stack) serves the page, the
// ledger's snapshot and the proxy, and refuses writes; the write address, which the stack keeps
// on its internal network, serves the workers' writes alone. So nobody who can load the page
// can write to the ledger.
package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/regbo/lfp-swarm-lease/demo/internal/controllers"
	"github.com/regbo/lfp-swarm-lease/demo/internal/timeline"
	"github.com/regbo/lfp-swarm-lease/demo/ledger"
	"github.com/regbo/lfp-swarm-lease/demo/site"
	"github.com/regbo/lfp-swarm-lease/server/connlimit"
)

// Options are the settings of `demo serve`.
type Options struct {
	// Listen is the page's HTTP address.
	Listen string
	// WriteListen is the write API's address, HOST:PORT: an IP address (or none: every
	// address), or a name that resolves to an address of this host, listened on alone (in the
	// stack tasks.demo: the task's address on the stack's network). See listenWrite.
	WriteListen string
	// DataDir holds the ledger's file (a volume in the stack).
	DataDir string
	// Controller is the controller service's base URL.
	Controller string
	// Log receives the server's log lines.
	Log *slog.Logger
}

// Handler builds the page's routes over an open ledger and the election's timeline: the page,
// the ledger's snapshot, the recent transitions and the proxy to the controller, which it
// reaches through transport. It refuses writes (403): they belong on WriteHandler's address.
func Handler(l *ledger.Ledger, tl *timeline.Timeline, controller string, transport http.RoundTripper, log *slog.Logger) (http.Handler, error) {
	proxy, err := controllerProxy(controller, transport, log)
	if err != nil {
		return nil, err
	}
	api := ledgerAPI{ledger: l, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", healthz)
	mux.HandleFunc("GET /api/ledger", api.snapshot)
	mux.HandleFunc("GET /api/transitions", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, Transitions{Transitions: tl.Recent()})
	})
	mux.HandleFunc("POST /api/ledger/entries", refuseWrite)
	mux.Handle("GET /v1/state", proxy)
	mux.Handle("GET /v1/events", proxy)
	mux.Handle("GET /", site.Handler())
	return mux, nil
}

// Transitions is the answer of GET /api/transitions.
type Transitions struct {
	// Transitions are the latest terms and vacancies demo serve saw, newest first.
	Transitions []timeline.Transition `json:"transitions"`
}

// WriteHandler builds the write address's routes: POST /api/ledger/entries and GET /healthz.
func WriteHandler(l *ledger.Ledger, log *slog.Logger) http.Handler {
	api := ledgerAPI{ledger: l, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", healthz)
	mux.HandleFunc("POST /api/ledger/entries", api.append)
	return mux
}

func healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// refuseWrite answers a write sent to the page's address.
func refuseWrite(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusForbidden, WriteAnswer{Error: "writes are not accepted on the page's address: the workers write to the ledger's " +
		"write address (DEMO_WRITE_LISTEN), on the stack's internal network", Code: "write_address_only"})
}

// Run opens the ledger and serves until ctx ends, then shuts down gracefully. The page is
// served first: Swarm gives a task a DNS name only once its healthcheck (the page's /healthz)
// passes, and the write address may be a name that waits for it.
func Run(ctx context.Context, o Options) error {
	// The timeline follows the election, and tells the ledger which fences it issued.
	tl := timeline.New()
	l, err := ledger.Open(o.DataDir, tl)
	if err != nil {
		return err
	}
	defer l.Close()
	// One way to the controllers for the proxy and the timeline: a replica found stalled by one
	// is tried last by both.
	transport := controllers.NewTransport(nil)
	defer transport.CloseIdleConnections()
	page, err := Handler(l, tl, o.Controller, transport, o.Log)
	if err != nil {
		return err
	}
	followCtx, stopFollowing := context.WithCancel(ctx)
	following := make(chan struct{})
	go func() { defer close(following); tl.Follow(followCtx, o.Controller, transport, o.Log) }()
	defer func() { stopFollowing(); <-following }()
	pageConns, writeConns := connectionBudget()
	pageLn, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", o.Listen, err)
	}
	pageSrv, pageLn, err := newHTTPServer(page, pageLn, pageConns, 0)
	if err != nil {
		return err
	}
	done := make(chan error, 2)
	go func() { done <- pageSrv.Serve(pageLn) }()
	servers := []*http.Server{pageSrv}
	o.Log.Info("serving the page", "addr", pageLn.Addr().String())

	var serveErr error
	writeLn, err := listenWrite(ctx, o.WriteListen, o.Log)
	if err == nil {
		var writeSrv *http.Server
		writeSrv, writeLn, err = newHTTPServer(WriteHandler(l, o.Log), writeLn, writeConns, 10*time.Second)
		if err == nil {
			go func() { done <- writeSrv.Serve(writeLn) }()
			servers = append(servers, writeSrv)
			o.Log.Info("listening", "addr", pageLn.Addr().String(), "write_addr", writeLn.Addr().String(), "data", o.DataDir,
				"controller", o.Controller, "entries", l.Snapshot().Counts)
			select {
			case serveErr = <-done:
			case <-ctx.Done():
			}
		}
	}
	if err != nil && ctx.Err() == nil {
		serveErr = err
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	// Streams never end by themselves: close what is still open after the grace period.
	for _, srv := range servers {
		if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) && serveErr == nil {
			serveErr = err
		}
		srv.Close()
	}
	return serveErr
}

// writeConnections bounds the write address's connections: the leader's worker keeps one, and
// workers of lost terms one each until they stop.
const writeConnections = 64

// connectionBudget divides what the descriptor limit leaves (connlimit.Capacity: the
// limit less a reserve for the ledger and the process) between the write address and the
// page's: the page's connections get half of the rest, since each one may hold a second
// descriptor, the proxy's connection to a controller for its event stream. A flood of the
// page's address therefore never takes the descriptors a worker's write needs.
func connectionBudget() (page, write int) {
	c, ok := connlimit.Capacity()
	if !ok {
		c = connlimit.DefaultMaxConnections
	}
	write = min(writeConnections, max(c/8, 1))
	return max((c-write)/2, 1), write
}

// newHTTPServer serves h on ln with the connections bounded as lfp-swarm-lease serve bounds its
// own (connlimit: at most maxConns, a quarter of them from one client address,
// waiting connections shed to admit new ones, a short idle timeout under pressure) and every
// request's headers and idle time bounded. readWrite, when positive, bounds reading a request
// and writing its answer; the page's address has none, since /v1/events is a long-lived stream
// (its only body, a refused write, is never read).
func newHTTPServer(h http.Handler, ln net.Listener, maxConns int, readWrite time.Duration) (*http.Server, net.Listener, error) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 16 << 10,
		ReadTimeout: readWrite, WriteTimeout: readWrite}
	limiter, err := connlimit.New(connlimit.Options{MaxConnections: maxConns})
	if err != nil {
		return nil, nil, err
	}
	srv.ConnState, srv.ConnContext = limiter.ConnState, connlimit.ConnContext
	return srv, limiter.Listener(ln), nil
}
