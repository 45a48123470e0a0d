package runcmd

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
)

// checkModeFlags refuses flags that do nothing in the mode the configuration selects: an
// --election without a server to hold it, or an HTTP API flag with a server (run serves none
// then). Variables and labels are left alone — one environment is often shared by replicas of
// both modes — and only flags, typed for this one command line, are refused.
func checkModeFlags(cfg *config.Config) error {
	flag := func(key string) bool { return cfg.Source(key).Kind == config.FromFlag }
	var errs []error
	if cfg.Server == "" && flag(config.KeyElectionID) {
		errs = append(errs, fmt.Errorf("--%s does nothing without --%s (the elections server whose room it names); on the Swarm lease the election is --%s",
			config.FlagName(config.KeyElectionID), config.FlagName(config.KeyServer), config.FlagName(config.KeyNamespace)))
	}
	if cfg.Server != "" {
		for _, key := range []string{config.KeyListen, config.KeyKeepAliveMillis, config.KeyCORSAllowedOrigins} {
			if flag(key) {
				errs = append(errs, fmt.Errorf("--%s does nothing with --%s: run serves no HTTP API then; observe the room on the elections server (GET /elections/ID/watch)",
					config.FlagName(key), config.FlagName(config.KeyServer)))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return cmdutil.Usage(err)
	}
	return nil
}

// listenError explains a listen address run cannot bind; one in use says what to do.
func listenError(cfg *config.Config, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return cmdutil.Usage(fmt.Errorf("%s %s (from %s) is in use by another process: set --%s off to run without the HTTP API, or another port (e.g. --%s 127.0.0.1:0 for any free one)",
			config.KeyListen, cfg.Listen, cfg.Source(config.KeyListen), config.FlagName(config.KeyListen), config.FlagName(config.KeyListen)))
	}
	return cmdutil.Usage(fmt.Errorf("invalid %s (from %s): %w", config.KeyListen, cfg.Source(config.KeyListen), err))
}
