package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/server"
)

func (a *App) newServeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the election over HTTP without contending (observation only)",
		Long: `Serve the controller endpoints of the election — /healthz, /readyz, /v1/info, /v1/state,
/v1/events (SSE), /docs, /openapi.json, /metrics — on the listen address, without contending.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.loadConfig(cmd)
			if err != nil {
				return err
			}
			if cfg.Identity.HolderID == "" {
				// An observer never writes; it still needs an identity to open the election.
				cfg.Identity.HolderID = "observer"
			}
			if cfg.Listen == config.ListenOff {
				return &usageError{errors.New("serve needs a listen address; listen is off")}
			}
			metrics := server.NewMetrics()
			s, err := a.openElection(cfg, lease.WithObserver(metrics))
			if err != nil {
				return err
			}
			defer s.close()
			log := slog.New(slog.NewTextHandler(a.Err, nil))
			return a.serveHTTP(cmd.Context(), s, metrics, log)
		},
	}
	config.RegisterFlags(cmd.Flags(), config.KeyListen, config.KeyDefaultPollMillis, config.KeyKeepAliveMillis)
	return cmd
}

// serveHTTP serves the election's HTTP API on the configured address until ctx ends.
func (a *App) serveHTTP(ctx context.Context, s *session, metrics *server.Metrics, log *slog.Logger) error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return &usageError{fmt.Errorf("invalid %s (from %s): %w", config.KeyListen, s.cfg.Source(config.KeyListen), err)}
	}
	return a.serveOn(ctx, s, metrics, log, ln, nil)
}

// serveOn serves the election's HTTP API on ln until ctx ends, from snaps when set (else the
// server watches the election itself).
func (a *App) serveOn(ctx context.Context, s *session, metrics *server.Metrics, log *slog.Logger, ln net.Listener, snaps <-chan lease.Snapshot) error {
	srv, err := server.New(server.Options{
		Election: s.election, Version: Version, PollInterval: s.cfg.DefaultPoll,
		KeepAlive: s.cfg.KeepAlive, Metrics: metrics, Logger: log, Snapshots: snaps,
	})
	if err != nil {
		ln.Close()
		return err
	}
	log.Info("listening", "addr", ln.Addr().String(), "namespace", s.cfg.Namespace)
	return srv.Serve(ctx, ln)
}

func (a *App) newOpenAPICmd() *cobra.Command {
	return &cobra.Command{
		Use:   "openapi",
		Short: "Print the OpenAPI 3.1 contract of the HTTP API",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			doc, err := server.Contract()
			if err != nil {
				return err
			}
			_, err = os.Stdout.Write(doc)
			return err
		},
	}
}
