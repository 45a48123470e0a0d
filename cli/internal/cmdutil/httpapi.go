package cmdutil

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/regbo/lfp-swarm-lease/cli/internal/buildinfo"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/server"
)

// ServeElection serves the election's HTTP API (run's) on ln until ctx ends, from snaps when
// set (else the server watches the election itself).
func ServeElection(ctx context.Context, s *Session, metrics *server.Metrics, log *slog.Logger, ln net.Listener, snaps <-chan lease.Snapshot) error {
	if err := CheckConnectionLimit(s.Config); err != nil {
		ln.Close()
		return err
	}
	srv, err := server.New(server.Options{
		Election: s.Election, Version: buildinfo.Get().Version, PollInterval: s.Config.DefaultPoll,
		KeepAlive: s.Config.KeepAlive, Metrics: metrics, Logger: log, Snapshots: snaps,
		MaxConnections: s.Config.MaxConnections, MaxConnectionsPerClient: s.Config.MaxConnectionsPerClient,
		CORSAllowedOrigins: s.Config.CORSAllowedOrigins,
	})
	if err != nil {
		ln.Close()
		return err
	}
	log.Info("listening", "addr", ln.Addr().String(), "namespace", s.Config.Namespace)
	return srv.Serve(ctx, ln)
}

// CheckConnectionLimit refuses connection limits the descriptor limit cannot hold: past it,
// connections would take the descriptors the store needs.
func CheckConnectionLimit(cfg *config.Config) error {
	capacity, ok := server.ConnectionCapacity()
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
