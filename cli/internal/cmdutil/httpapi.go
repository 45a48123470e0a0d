package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"syscall"

	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/images/buildinfo"
	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/server"
	"github.com/regbo/lfp-swarm-lease/server/connlimit"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// ServeElection serves the election's HTTP API (run's) on ln until ctx ends, from snaps when
// set (else the server watches the election itself).
func ServeElection(ctx context.Context, s *Session, metrics *server.Metrics, log *slog.Logger, ln net.Listener, snaps <-chan lease.Snapshot) error {
	opts, err := ServerOptions(s.Config, metrics, log)
	if err != nil {
		ln.Close()
		return err
	}
	opts.Election, opts.Snapshots = s.Election, snaps
	return Serve(ctx, opts, log, ln, "namespace", s.Config.Namespace)
}

// ServerOptions are the HTTP API's options that every command serving it takes from the
// configuration — poll and keep-alive intervals, connection limits, CORS origins — once the
// connection limits fit in the descriptor limit. The caller adds what it serves (an election,
// the elections API).
func ServerOptions(cfg *config.Config, metrics *server.Metrics, log *slog.Logger) (server.Options, error) {
	if err := CheckConnectionLimit(cfg); err != nil {
		return server.Options{}, err
	}
	return server.Options{
		Version: buildinfo.Get().Version, PollInterval: cfg.DefaultPoll, KeepAlive: cfg.KeepAlive, Metrics: metrics, Logger: log,
		MaxConnections: cfg.MaxConnections, MaxConnectionsPerClient: cfg.MaxConnectionsPerClient, CORSAllowedOrigins: cfg.CORSAllowedOrigins,
	}, nil
}

// Serve builds the server opts describe and serves it on ln until ctx ends, after logging the
// address with attrs (what it serves). ln is closed when the server cannot be built. It installs
// the API's error model, a change to the huma package's state: the process serves one API.
func Serve(ctx context.Context, opts server.Options, log *slog.Logger, ln net.Listener, attrs ...any) error {
	wire.InstallErrorModel()
	srv, err := server.New(opts)
	if err != nil {
		ln.Close()
		return err
	}
	log.Info("listening", append([]any{"addr", ln.Addr().String()}, attrs...)...)
	return srv.Serve(ctx, ln)
}

// CheckConnectionLimit refuses connection limits the server would refuse — a per-client limit
// above the global one (connlimit.CheckLimits) — and those the descriptor limit cannot
// hold: past it, connections would take the descriptors the store needs.
func CheckConnectionLimit(cfg *config.Config) error {
	if err := connlimit.CheckLimits(cfg.MaxConnections, cfg.MaxConnectionsPerClient); err != nil {
		return Usage(fmt.Errorf("invalid %s %q (from %s): must not exceed %s (%d)", config.KeyMaxConnectionsPerClient,
			strconv.Itoa(cfg.MaxConnectionsPerClient), cfg.Source(config.KeyMaxConnectionsPerClient), config.KeyMaxConnections, cfg.MaxConnections))
	}
	capacity, ok := connlimit.Capacity()
	if !ok {
		return nil
	}
	key, n := config.KeyMaxConnections, cfg.MaxConnections
	if n == 0 { // the default is the capacity itself; only the per-client bound can exceed it
		key, n = config.KeyMaxConnectionsPerClient, cfg.MaxConnectionsPerClient
	}
	if n > capacity {
		return Usage(fmt.Errorf("invalid %s %d (from %s): the descriptor limit (ulimit -n) leaves room for %d connections beside the store's files; lower it or raise the limit",
			key, n, cfg.Source(key), capacity))
	}
	return nil
}

// Listen binds the listen address of a command serving the HTTP API — the one place where a
// bind error becomes what to do: an address in use names the setting, where it came from, and
// another port, and, where the command also runs without the API (run), off. Every failure is a
// usage error (exit 2).
func Listen(cfg *config.Config, offAllowed bool) (net.Listener, error) {
	flag := "--" + config.FlagName(config.KeyListen)
	if cfg.Listen == config.ListenOff && !offAllowed {
		return nil, Usage(fmt.Errorf("%s is off (from %s), and this command serves nothing else: set %s to an address such as 127.0.0.1:8080",
			config.KeyListen, cfg.Source(config.KeyListen), flag))
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	switch {
	case err == nil:
		return ln, nil
	case errors.Is(err, syscall.EADDRINUSE):
		fix := fmt.Sprintf("set %s to another port (%s 127.0.0.1:0 takes any free one)", flag, flag)
		if offAllowed {
			fix += ", or " + flag + " off to run without the HTTP API"
		}
		return nil, Usage(fmt.Errorf("%s %s (from %s) is in use by another process: %s", config.KeyListen, cfg.Listen, cfg.Source(config.KeyListen), fix))
	}
	return nil, Usage(fmt.Errorf("cannot listen on %s %s (from %s): %w", config.KeyListen, cfg.Listen, cfg.Source(config.KeyListen), err))
}
