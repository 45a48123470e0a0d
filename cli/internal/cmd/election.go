package cmd

import (
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
	if cmd.Name() == "run" {
		// Outside a Swarm task the holder is this host.
		loader.Hostname = a.Hostname
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
