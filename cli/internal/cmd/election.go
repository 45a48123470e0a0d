package cmd

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/lease"
)

// loadConfig reads the settings of cmd's flags and the environment.
func (a *App) loadConfig(cmd *cobra.Command) (*config.Config, error) {
	loader := config.Loader{
		ObserverOnly: cmd.Name() == "serve",
		// serve works without an election (elections API only) and defaults to the
		// embedded file store.
		NamespaceOptional: cmd.Name() == "serve",
		// run with a server contends through the elections API: no Docker access needed.
		Remote: cmd.Name() == "run",
	}
	if cmd.Name() == "serve" {
		loader.StoreDefault = config.FileStoreURL(DefaultDataDir())
	}
	return a.LoadConfig(cmd, loader)
}

// openSession loads the configuration and opens the election it names; extra options (an
// observer for metrics) go to the election.
func (a *App) openSession(cmd *cobra.Command, extra ...lease.Option) (*cmdutil.Session, error) {
	cfg, err := a.loadConfig(cmd)
	if err != nil {
		return nil, err
	}
	return cmdutil.OpenElection(cfg, extra...)
}

// withElection opens the election the configuration names, runs fn with the --timeout bound
// on the command's context, and closes the store.
func (a *App) withElection(cmd *cobra.Command, fn func(ctx context.Context, s *cmdutil.Session) error) error {
	s, err := a.openSession(cmd)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), a.Timeout)
	defer cancel()
	return fn(ctx, s)
}

// fenceArg parses the FENCE argument.
func fenceArg(args []string) (uint64, error) {
	if len(args) != 1 {
		return 0, cmdutil.Usage(fmt.Errorf("want exactly one argument, the fence (got %d)", len(args)))
	}
	f, err := strconv.ParseUint(args[0], 10, 64)
	if err != nil || f == 0 {
		return 0, cmdutil.Usage(fmt.Errorf("invalid fence %q: want a positive whole number, as printed by try-acquire", args[0]))
	}
	return f, nil
}
