package runcmd

import (
	"errors"
	"fmt"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
)

// checkModeFlags refuses flags that do nothing in the mode the configuration selects: an
// --election without a server to hold it, or a flag of the election's HTTP API with a server
// (run serves only /healthz, /readyz and /metrics then). Variables and labels are left alone —
// one environment is often shared by replicas of both modes — and only flags, typed for this
// one command line, are refused.
func checkModeFlags(cfg *config.Config) error {
	flag := func(key string) bool { return cfg.Source(key).Kind == config.FromFlag }
	var errs []error
	if cfg.Server == "" && flag(config.KeyElectionID) {
		errs = append(errs, fmt.Errorf("--%s does nothing without --%s (the elections server whose room it names); on the Swarm lease the election is --%s",
			config.FlagName(config.KeyElectionID), config.FlagName(config.KeyServer), config.FlagName(config.KeyNamespace)))
	}
	if cfg.Server != "" {
		for _, key := range []string{config.KeyKeepAliveMillis, config.KeyCORSAllowedOrigins} {
			if flag(key) {
				errs = append(errs, fmt.Errorf("--%s does nothing with --%s: run serves only /healthz, /readyz and /metrics then; observe the room on the elections server (GET /elections/ID/watch)",
					config.FlagName(key), config.FlagName(config.KeyServer)))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return cmdutil.Usage(err)
	}
	return nil
}
