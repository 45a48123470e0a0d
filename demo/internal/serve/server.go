// Package serve is `demo serve`: the page, the ledger API and the proxy to the controller.
package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/regbo/lfp-swarm-lease/demo/ledger"
	"github.com/regbo/lfp-swarm-lease/demo/site"
	"github.com/regbo/lfp-swarm-lease/server"
)

// Options are the settings of `demo serve`.
type Options struct {
	// Listen is the HTTP address.
	Listen string
	// DataDir holds the ledger's file (a volume in the stack).
	DataDir string
	// Controller is the controller service's base URL.
	Controller string
	// Log receives the server's log lines.
	Log *slog.Logger
}

// Handler builds the routes over an open ledger.
func Handler(l *ledger.Ledger, controller string, log *slog.Logger) (http.Handler, error) {
	proxy, err := controllerProxy(controller, log)
	if err != nil {
		return nil, err
	}
	api := ledgerAPI{ledger: l, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /api/ledger", api.snapshot)
	mux.HandleFunc("POST /api/ledger/entries", api.append)
	mux.Handle("GET /v1/state", proxy)
	mux.Handle("GET /v1/events", proxy)
	mux.Handle("GET /", site.Handler())
	return mux, nil
}

// Run opens the ledger and serves until ctx ends, then shuts down gracefully.
func Run(ctx context.Context, o Options) error {
	l, err := ledger.Open(o.DataDir)
	if err != nil {
		return err
	}
	defer l.Close()
	h, err := Handler(l, o.Controller, o.Log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", o.Listen, err)
	}
	srv, ln, err := newHTTPServer(h, ln, pageConnections())
	if err != nil {
		return err
	}
	o.Log.Info("listening", "addr", ln.Addr().String(), "data", o.DataDir, "controller", o.Controller, "entries", l.Snapshot().Counts)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	// Streams never end by themselves: close what is still open after the grace period.
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	srv.Close()
	return nil
}

// pageConnections bounds the page's connections: half of what the descriptor limit leaves
// (server.ConnectionCapacity), since each one may hold a second descriptor, the proxy's
// connection to a controller for its event stream.
func pageConnections() int {
	c, ok := server.ConnectionCapacity()
	if !ok {
		c = server.DefaultMaxConnections
	}
	return max(c/2, 1)
}

// newHTTPServer serves h on ln with the connections bounded as lfp-swarm-lease serve bounds its
// own (server.LimitConnections: at most maxConns, a quarter of them from one client address,
// waiting connections shed to admit new ones, a short idle timeout under pressure) and every
// request's headers and idle time bounded. There is no read or write timeout: /v1/events is a
// long-lived stream, and the one body read, a write's, is bounded in size.
func newHTTPServer(h http.Handler, ln net.Listener, maxConns int) (*http.Server, net.Listener, error) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 16 << 10}
	limited, err := server.LimitConnections(srv, ln, maxConns, 0)
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	return srv, limited, nil
}
