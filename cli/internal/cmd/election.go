package cmd

import (
	"context"
	"fmt"
	"strconv"

	"github.com/moby/moby/client"
	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
)

// session is what a command acting on one election works with.
type session struct {
	cfg      *config.Config
	election *lease.Election
	store    lease.Store
	close    func()
}

// loadConfig reads the settings of cmd's flags and the environment, discovering the Swarm task
// through the Docker engine of the standard environment when needed.
func (a *App) loadConfig(cmd *cobra.Command) (*config.Config, error) {
	loader := config.Loader{
		ObserverOnly: cmd.Name() == "serve",
		// serve works without an election (elections API only) and defaults to the
		// embedded file store.
		NamespaceOptional: cmd.Name() == "serve",
		// run with a server contends through the elections API: no Docker access needed.
		Remote:    cmd.Name() == "run",
		EnvPrefix: a.envPrefix,
		Flags:     cmd.Flags(),
		Environ:   a.Environ,
		Warn:      func(w string) { fmt.Fprintf(a.Err, "lfp-swarm-lease: warning: %s\n", w) },
		Discover: func(ctx context.Context) (config.Task, error) {
			docker, err := client.New(client.FromEnv)
			if err != nil {
				return config.Task{}, err
			}
			defer docker.Close()
			t, err := swarmstore.Discover(ctx, docker, a.Hostname())
			if err != nil {
				return config.Task{}, err
			}
			return config.Task{ServiceName: t.ServiceName, NodeID: t.NodeID, TaskID: t.TaskID, Labels: t.Labels}, nil
		},
	}
	if cmd.Name() == "serve" {
		loader.StoreDefault = config.FileStoreURL(DefaultDataDir())
	}
	cfg, err := loader.Load(cmd.Context())
	if err != nil {
		return nil, &usageError{err}
	}
	return cfg, nil
}

// openSession loads the configuration and opens the election it names; extra options (an
// observer for metrics) go to the election.
func (a *App) openSession(cmd *cobra.Command, extra ...lease.Option) (*session, error) {
	cfg, err := a.loadConfig(cmd)
	if err != nil {
		return nil, err
	}
	return a.openElection(cfg, extra...)
}

// openElection opens the election cfg names.
func (a *App) openElection(cfg *config.Config, extra ...lease.Option) (*session, error) {
	if err := cfg.RequireElection(); err != nil {
		return nil, &usageError{err}
	}
	store, closeStore, err := OpenStore(cfg)
	if err != nil {
		return nil, err
	}
	e, err := lease.New(store, cfg.Namespace, cfg.Identity, append([]lease.Option{
		lease.WithTTL(cfg.TTL), lease.WithMaxCASRetries(cfg.MaxCASRetries), lease.WithMaxClockSkew(cfg.MaxClockSkew)}, extra...)...)
	if err != nil {
		closeStore()
		return nil, &usageError{err}
	}
	return &session{cfg: cfg, election: e, store: store, close: closeStore}, nil
}

// OpenStore opens the store a configuration names. There is no fallback between stores: a
// Swarm store that cannot reach a manager fails on first use with a clear error.
func OpenStore(cfg *config.Config) (lease.Store, func(), error) {
	switch cfg.Store {
	case config.StoreFile:
		s, err := filestore.New(cfg.StoreDir)
		if err != nil {
			err = fmt.Errorf("%s (from %s): %w", config.KeyStore, cfg.Source(config.KeyStore), err)
			if permissionDenied(err) || storeFull(err) { // the setting is fine; the directory is not
				return nil, nil, err
			}
			return nil, nil, &usageError{fmt.Errorf("invalid %w", err)}
		}
		return s, func() {}, nil
	case config.StoreMemory:
		return memstore.New(), func() {}, nil
	default:
		s, err := swarmstore.NewFromEnv()
		if err != nil {
			return nil, nil, &usageError{err}
		}
		return s, func() { s.Close() }, nil
	}
}

// withElection opens the election the configuration names, runs fn with the --timeout bound
// on the command's context, and closes the store.
func (a *App) withElection(cmd *cobra.Command, fn func(ctx context.Context, s *session) error) error {
	s, err := a.openSession(cmd)
	if err != nil {
		return err
	}
	defer s.close()
	ctx, cancel := context.WithTimeout(cmd.Context(), a.timeout)
	defer cancel()
	return fn(ctx, s)
}

// fenceArg parses the FENCE argument.
func fenceArg(args []string) (uint64, error) {
	if len(args) != 1 {
		return 0, &usageError{fmt.Errorf("want exactly one argument, the fence (got %d)", len(args))}
	}
	f, err := strconv.ParseUint(args[0], 10, 64)
	if err != nil || f == 0 {
		return 0, &usageError{fmt.Errorf("invalid fence %q: want a positive whole number, as printed by try-acquire", args[0])}
	}
	return f, nil
}
