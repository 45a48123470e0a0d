// Package servecmd holds `serve` — the elections API and, with a namespace, the election's
// controller endpoints, without contending — and `openapi`, which prints their contract.
package servecmd

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server"
	"github.com/regbo/lfp-swarm-lease/server/clientip"
	"github.com/regbo/lfp-swarm-lease/server/elections"
	"github.com/regbo/lfp-swarm-lease/server/heapfloor"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// Options are serve's.
type Options struct {
	// IO: serve logs on Err.
	IO cmdutil.IOStreams
	// Config loads the configuration.
	Config func() (*config.Config, error)
	// Log is --log-format and --log-level.
	Log cmdutil.LogOptions
}

// NewCmdServe is `serve`; runF, when set, replaces serveRun (tests of parsing).
func NewCmdServe(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the elections API, and with a namespace the election's endpoints, over HTTP",
		Long:  "Serve the elections API (rooms), /docs and /metrics, and with a namespace an election's /v1 endpoints.",
		Example: `  lfp-swarm-lease serve --listen 127.0.0.1:8080
  lfp-swarm-lease serve --store etcd://10.0.0.1:2379,10.0.0.2:2379/elections`,
		Annotations: map[string]string{cmdutil.DocsAnnotation: "docs/http-api.md"},
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.IO = f.IOStreams
			opts.Config = func() (*config.Config, error) {
				// serve never contends, works without an election (elections API only) and
				// defaults to the embedded file store.
				return f.LoadConfig(cmd, config.Loader{NoHolderID: true, NamespaceOptional: true,
					StoreDefault: config.FileStoreURL(DefaultDataDir())})
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return serveRun(cmd.Context(), opts)
		},
	}
	config.RegisterFlags(cmd.Flags(), append([]string{config.KeyListen, config.KeyDefaultPollMillis, config.KeyKeepAliveMillis,
		config.KeyElections, config.KeyElectionsNamespace, config.KeyRoomShards, config.KeyMaxActiveRooms,
		config.KeyAdmissionPerMinute, config.KeyMaxTrackedClients, config.KeyTrustedProxies,
		config.KeyMaxWatchesPerClient, config.KeyMaxWatches, config.KeyWatchLifetimeMs,
		config.KeyMaxConnections, config.KeyMaxConnectionsPerClient, config.KeyCORSAllowedOrigins,
		config.KeyNamespace, config.KeyMaxCASRetries, config.KeyMaxClockSkewMs}, config.StoreKeys...)...)
	config.SetFlagDefault(cmd.Flags(), config.KeyStore, "file: in the data directory, one host only")
	cmdutil.AddLogFlags(cmd.Flags(), &opts.Log, "info")
	f.AddEnvPrefixFlag(cmd.Flags())
	f.AddJSONFlag(cmd.Flags())
	return cmd
}

// DefaultDataDir is where serve keeps its embedded file store when no store is configured.
func DefaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "lfp-swarm-lease")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".local", "share", "lfp-swarm-lease")
	}
	return "/var/lib/lfp-swarm-lease"
}

// serveRun listens and serves until ctx ends (SIGTERM, SIGINT), then logs that it stopped.
func serveRun(ctx context.Context, opts *Options) error {
	log, err := opts.Log.Logger(opts.IO.Err)
	if err != nil {
		return err
	}
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	proxies, err := trustedProxies(cfg)
	if err != nil {
		return err
	}
	ln, err := cmdutil.Listen(cfg, false)
	if err != nil {
		return err
	}
	defer ln.Close()
	err = serve(ctx, cfg, proxies, ln, log, opts.IO.Err)
	if ctx.Err() != nil {
		log.Info("stopped", "reason", "shutdown", "err", err)
		return err
	}
	return err
}

// trustedProxies parses the trusted_proxies setting by the server's rule, naming the setting
// and its source when it does not parse.
func trustedProxies(cfg *config.Config) ([]netip.Prefix, error) {
	proxies, err := clientip.ParseTrustedProxies(cfg.Elections.TrustedProxies)
	if err != nil {
		return nil, cmdutil.Usage(fmt.Errorf("invalid %s %q (from %s): %v; separate several with commas",
			config.KeyTrustedProxies, cfg.Elections.TrustedProxies, cfg.Source(config.KeyTrustedProxies), err))
	}
	return proxies, nil
}

// serve runs the server of the serve command on ln until ctx ends, the elections API trusting
// proxies; stderr is the stream log lines go to, whose drops it counts.
func serve(ctx context.Context, cfg *config.Config, proxies []netip.Prefix, ln net.Listener, log *slog.Logger, stderr io.Writer) error {
	metrics := server.NewMetrics()
	cmdutil.RegisterLogDrops(metrics.Registry(), stderr)
	opts, err := cmdutil.ServerOptions(cfg, metrics, log)
	if err != nil {
		return err
	}
	store, closeStore, err := cmdutil.OpenStore(cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	if cfg.Namespace != "" {
		if cfg.Identity.HolderID == "" {
			// An observer never writes; it still needs an identity to open the election.
			cfg.Identity.HolderID = "observer"
		}
		if err := cfg.RequireElection(); err != nil {
			return cmdutil.Usage(err)
		}
		e, err := lease.New(store, cfg.Namespace, cfg.Identity, lease.WithTTL(cfg.TTL), lease.WithMaxCASRetries(cfg.MaxCASRetries),
			lease.WithMaxClockSkew(cfg.MaxClockSkew), lease.WithRecorder(metrics))
		if err != nil {
			return cmdutil.Usage(err)
		}
		opts.Election = e
	}
	roomStore, ok := store.(rooms.Store)
	if !ok { // the memory store keeps elections and rooms apart
		roomStore = rooms.NewMemoryStore()
	}
	el := cfg.Elections
	m, err := rooms.New(roomStore, el.Namespace, roomOptions(cfg)...)
	if err != nil {
		return cmdutil.Usage(fmt.Errorf("invalid elections settings: %w", err))
	}
	admission := cmp.Or(el.AdmissionPerMinute, -1) // no limit
	opts.Elections = &elections.Options{Rooms: m, Disabled: !el.Enabled, AdmissionPerMinute: admission,
		MaxTrackedClients: el.MaxTrackedClients, TrustedProxies: proxies, MaxWatchesPerClient: el.MaxWatchesPerClient,
		MaxWatches: el.MaxWatches, WatchLifetime: el.WatchLifetime}
	// The elections API's requests leave garbage that a small live heap would collect every few
	// hundred requests: the process keeps a heap floor (unless GOGC is set).
	heapfloor.Keep()
	return cmdutil.Serve(ctx, opts, log, ln, "store", store.Describe(), "elections", el.Enabled,
		"elections_namespace", el.Namespace, "max_active_rooms", m.MaxActiveRooms(), "room_shards", m.Shards(), "namespace", cfg.Namespace)
}

// roomOptions are the rooms engine's options from the configuration. Without max_active_rooms
// the limit is the engine's default for the store: 10,000 on stores that keep shard documents,
// 1,000,000 on etcd, which keeps every room apart. Clock skew between replicas exists only where
// they run on several hosts, Swarm and etcd: the file and memory stores have one clock, and a
// lease then ends exactly at expires_at.
func roomOptions(cfg *config.Config) []rooms.Option {
	el := cfg.Elections
	skew := time.Duration(0)
	if cfg.Store == config.StoreSwarm || cfg.Store == config.StoreEtcd {
		skew = cfg.MaxClockSkew
	}
	opts := []rooms.Option{rooms.WithMaxClockSkew(skew), rooms.WithMaxCASRetries(cfg.MaxCASRetries)}
	if el.Shards != 0 {
		opts = append(opts, rooms.WithShards(el.Shards))
	}
	if el.MaxActiveRooms != nil {
		opts = append(opts, rooms.WithMaxActiveRooms(*el.MaxActiveRooms))
	}
	return opts
}

// NewCmdOpenAPI is `openapi`: it prints the HTTP API's contract on stdout.
func NewCmdOpenAPI(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:         "openapi",
		Short:       "Print the OpenAPI 3.1 contract of the HTTP API",
		Example:     "  lfp-swarm-lease openapi > clients/openapi.json",
		Annotations: map[string]string{cmdutil.DocsAnnotation: "docs/http-api.md"},
		Args:        cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			wire.InstallErrorModel() // the contract documents the API's errors
			doc, err := server.Contract()
			if err != nil {
				return err
			}
			_, err = f.Out.Write(doc)
			return err
		},
	}
}
