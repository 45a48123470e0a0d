package runcmd

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/lease"
)

// timingSettingError turns the engines' refusal of run's timing — the *TimingError of
// lease.NewContender or swarmlease.NewContender, one rule and one type (the timing module) — into a configuration error (exit 2) that names run's
// settings, their values and where they came from. The rule itself lives in the engines; other
// errors pass through unchanged.
func timingSettingError(cfg *config.Config, err error) error {
	var le *lease.TimingError
	switch {
	case errors.As(err, &le) && len(le.NotPositive) > 0:
		names := map[string]string{"RenewInterval": config.KeyRenewIntervalMs, "PollInterval": config.KeyDefaultPollMillis, "StopBefore": config.KeyShutdownTimeoutMs}
		var bad []string
		for _, field := range le.NotPositive {
			bad = append(bad, setting(cfg, names[field]))
		}
		return cmdutil.Usage(fmt.Errorf("invalid %s: must be positive", strings.Join(bad, ", ")))
	case errors.As(err, &le):
		return cmdutil.Usage(timingRule(cfg, le.RenewInterval, le.StopBefore, le.Window))
	}
	return err
}

// timingRule states the rule with run's setting names.
func timingRule(cfg *config.Config, renew, stop, window time.Duration) error {
	renewFrom := cfg.Source(config.KeyRenewIntervalMs).String()
	if cfg.RenewInterval == 0 {
		renewFrom = "default: a third of " + config.KeyTTLMillis
	}
	return fmt.Errorf("the renew interval (%s = %d, from %s) plus the child's grace period (%s) must be below %s (%s) minus its safety margin, %d ms: lower them or raise %s",
		config.KeyRenewIntervalMs, renew.Milliseconds(), renewFrom, setting(cfg, config.KeyShutdownTimeoutMs),
		config.KeyTTLMillis, setting(cfg, config.KeyTTLMillis), window.Milliseconds(), config.KeyTTLMillis)
}

// setting names a millisecond setting with its value and source: "ttl_ms = 3000, from flag
// --ttl-ms".
func setting(cfg *config.Config, key string) string {
	var v time.Duration
	switch key {
	case config.KeyTTLMillis:
		v = cfg.TTL
	case config.KeyShutdownTimeoutMs:
		v = cfg.ShutdownTimeout
	case config.KeyRenewIntervalMs:
		v = cfg.RenewInterval
	case config.KeyDefaultPollMillis:
		v = cfg.DefaultPoll
	}
	return fmt.Sprintf("%s = %d, from %s", key, v.Milliseconds(), cfg.Source(key))
}
