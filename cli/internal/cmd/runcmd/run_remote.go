package runcmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/cli/internal/runloop"
	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
)

// remoteRun is `run` with a server configured: it contends for a room of the elections server
// through the Go client's Hold instead of the Swarm lease, and supervises the child exactly as
// the Swarm mode does. It serves no HTTP API: the elections server already serves the room.
func remoteRun(ctx context.Context, opts *Options, cfg *config.Config, log *slog.Logger) error {
	if err := cfg.RequireRemote(); err != nil {
		return cmdutil.Usage(err)
	}
	candidate, err := candidateID(cfg, opts.Hostname)
	if err != nil {
		return cmdutil.Usage(err)
	}
	// The client's own lines (following, failed requests) name the room and candidate as run's do.
	base := log.With("server", cfg.Server)
	log = base.With("election_id", cfg.ElectionID, "candidate_id", candidate)
	el, err := swarmlease.NewElections(cfg.Server, swarmlease.WithLogger(base))
	if err != nil {
		return cmdutil.Usage(fmt.Errorf("invalid %s (from %s): %w", config.KeyServer, cfg.Source(config.KeyServer), err))
	}
	holdOpts := []swarmlease.HoldOption{swarmlease.WithStopBefore(cfg.ShutdownTimeout)}
	if cfg.RenewInterval > 0 {
		holdOpts = append(holdOpts, swarmlease.WithRenewInterval(cfg.RenewInterval))
	}
	if src := cfg.Source(config.KeyListen); src.Kind != config.FromDefault && cfg.Listen != config.ListenOff {
		log.Info("listen is ignored with a server: observe the room on the elections server", "listen", cfg.Listen,
			"watch", cfg.Server+"/elections/"+cfg.ElectionID+"/watch")
	}
	holder, err := el.NewHolder(cfg.ElectionID, swarmlease.CampaignRequest{CandidateID: candidate, TTL: cfg.TTL}, holdOpts...)
	if err != nil {
		return holdError(cfg, err)
	}
	loop := childLoop(opts, cfg)
	loop.Log = log
	loop.Prepare() // the guard of the first term, started while following
	defer loop.Close()
	log.Info("contending", "ttl", cfg.TTL)
	for ctx.Err() == nil {
		l, err := holder.Hold(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return holdError(cfg, err)
		}
		out, err := lead(ctx, loop, cfg, candidate, l, log)
		if err != nil {
			return commandError(err)
		}
		if out.Exit {
			return exitWithOutcome(out)
		}
		if out.ChildExited {
			// Give the followers one poll interval to take over, and never spin campaign/resign
			// with a crashing child: one that keeps crashing waits its back-off.
			_ = cmdutil.Sleep(ctx, max(cfg.DefaultPoll, out.Backoff), nil)
		}
	}
	log.Info("stopped")
	return nil
}

// lead runs the command for the term l through the supervision loop, and resigns the term
// afterwards so that a follower takes over at once.
func lead(ctx context.Context, loop *runloop.Loop, cfg *config.Config, candidate string, l *swarmlease.Leadership, log *slog.Logger) (runloop.Outcome, error) {
	log = log.With("term", l.Term())
	log.Info("acquired", "safety_deadline", l.Deadline())
	out, err := loop.Lead(ctx, runloop.Term{
		Done:      l.Done(),
		Remaining: func() time.Duration { return time.Until(l.Deadline()) },
		Renewed:   l.Renewed(),
		Env:       remoteChildEnv(cfg, candidate, l.Term()),
		Log:       log,
		Ended: func() []any {
			return []any{"reason", termEnd(l.Cause()), "safety_deadline", l.Deadline(), "deadline_in", time.Until(l.Deadline()).Round(time.Millisecond)}
		},
	})
	resign(ctx, l, log)
	return out, err
}

// resign ends the term and hands it back on a fresh context (run's own may be cancelled by
// then).
func resign(ctx context.Context, l *swarmlease.Leadership, log *slog.Logger) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	prev, err := l.Resign(rctx)
	switch cause := l.Cause(); {
	case errors.Is(cause, swarmlease.ErrLost) && err == nil:
		// The server ended the term: nothing to hand back.
	case err == nil:
		log.Info("resigned", "previous_term", prev)
	case errors.Is(err, swarmlease.ErrLeaseNotCurrent):
		log.Info("resign: the term was already over", "err", err)
	default:
		log.Warn("resign failed; followers take over when the lease expires", "err", err)
	}
}

// termEnd names why a term ended, for the log.
func termEnd(cause error) string {
	switch {
	case errors.Is(cause, swarmlease.ErrDeadline):
		return "deadline"
	case errors.Is(cause, swarmlease.ErrHeldByOther):
		return "lost: another term holds the room"
	case errors.Is(cause, swarmlease.ErrVacant):
		return "lost: the lease expired"
	case errors.Is(cause, swarmlease.ErrLost):
		return "lost: " + cause.Error()
	case errors.Is(cause, swarmlease.ErrResigned):
		return "resigned"
	default:
		return "shutdown"
	}
}

// holdError turns a refusal that retrying cannot change into run's error: inputs the client or
// the server refuses are configuration errors (exit 2) naming the setting.
func holdError(cfg *config.Config, err error) error {
	switch {
	case errors.Is(err, swarmlease.ErrInvalidTiming):
		return timingSettingError(cfg, err)
	case errors.Is(err, swarmlease.ErrInvalidTTL):
		return cmdutil.Usage(fmt.Errorf("the elections server refused %s (from %s): %w", config.KeyTTLMillis, cfg.Source(config.KeyTTLMillis), err))
	case errors.Is(err, swarmlease.ErrInvalidInput):
		return cmdutil.Usage(fmt.Errorf("the elections server at %s refused the campaign (check %s and %s): %w", cfg.Server, config.KeyElectionID, config.KeyHolderID, err))
	}
	return fmt.Errorf("the elections server at %s refused the campaign: %w", cfg.Server, err)
}

// remoteChildEnv is what the child learns of its term, under the configured prefix.
func remoteChildEnv(cfg *config.Config, candidate string, term uint64) []string {
	p := cfg.EnvPrefix + "_"
	return []string{
		p + "FENCE=" + strconv.FormatUint(term, 10),
		p + "HOLDER_ID=" + candidate,
		p + "NODE_ID=" + cfg.Identity.NodeID,
		p + "TASK_ID=" + cfg.Identity.TaskID,
		p + "NAMESPACE=" + cfg.ElectionID,
	}
}

// maxCandidateID is the longest candidate id of the elections API.
const maxCandidateID = 64

// candidateID is the candidate id of run through an elections server: holder_id when set
// (RequireRemote checked it), else the hostname with every character outside
// [A-Za-z0-9._:@-] replaced by '-', at most 64 characters.
func candidateID(cfg *config.Config, hostname func() string) (string, error) {
	if cfg.Identity.HolderID != "" {
		return cfg.Identity.HolderID, nil
	}
	id := sanitizeCandidate(hostname())
	if id == "" {
		return "", fmt.Errorf("no candidate id: the hostname is empty; set %s or --%s",
			config.EnvName(cfg.EnvPrefix, config.KeyHolderID), config.FlagName(config.KeyHolderID))
	}
	return id, nil
}

func sanitizeCandidate(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < maxCandidateID; i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', strings.IndexByte("._:@-", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}
