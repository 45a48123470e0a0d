package runcmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/timing"
)

// roomEngine wins terms of a room of an elections server through a swarmlease.Contender, and
// logs each term's transitions as a lease.Contender does: acquired, lost, term ended,
// released.
type roomEngine struct {
	cfg       *config.Config
	contender *swarmlease.Contender
	id        lease.Identity // the candidate id as HolderID, run's node and task ids
	log       *slog.Logger
}

// newRoomEngine checks run's settings for the room and builds its contender; following
// receives each leader the contender learns of while it follows.
func newRoomEngine(cfg *config.Config, log *slog.Logger, following func(Term)) (*roomEngine, error) {
	// The candidate id is the holder ID (by default the hostname, made a valid candidate id by
	// the configuration), which RequireRemote checks.
	if err := cfg.RequireRemote(); err != nil {
		return nil, cmdutil.Usage(err)
	}
	candidate := cfg.Identity.HolderID
	// The client's own lines (failed requests) name the server as run's do.
	el, err := swarmlease.NewClient(cfg.Server, swarmlease.WithLogger(log))
	if err != nil {
		return nil, cmdutil.Usage(fmt.Errorf("invalid %s (from %s): %w", config.KeyServer, cfg.Source(config.KeyServer), err))
	}
	holdOpts := []swarmlease.HoldOption{swarmlease.WithStopBefore(cfg.ShutdownTimeout), swarmlease.WithFollowing(func(l swarmlease.Leader) {
		following(Term{Fence: l.Term, Holder: lease.Identity{HolderID: l.CandidateID}, Namespace: cfg.ElectionID})
	})}
	if cfg.RenewInterval > 0 {
		holdOpts = append(holdOpts, swarmlease.WithRenewInterval(cfg.RenewInterval))
	}
	contender, err := el.NewContender(cfg.ElectionID, swarmlease.CampaignRequest{CandidateID: candidate, TTL: cfg.TTL}, holdOpts...)
	if err != nil {
		return nil, holdError(cfg, err)
	}
	return &roomEngine{cfg: cfg, contender: contender, log: log,
		id: lease.Identity{HolderID: candidate, NodeID: cfg.Identity.NodeID, TaskID: cfg.Identity.TaskID}}, nil
}

// Contend implements Contender.
func (c *roomEngine) Contend(ctx context.Context, lead func(Term) error) error {
	for ctx.Err() == nil {
		l, err := c.contender.Hold(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return holdError(c.cfg, err)
		}
		t := Term{Fence: l.Fence(), Holder: c.id, Namespace: c.cfg.ElectionID, Done: l.Done(), Cause: l.Cause,
			Remaining: func() time.Duration { return time.Until(l.Deadline()) }, Renewed: l.Renewed()}
		log := c.log.With(t.logAttrs()...)
		log.Info("acquired", "expires_at", l.Leader().ExpiresAt, "safety_deadline", l.Deadline())
		leadErr := lead(t)
		steppedDown := l.Cause() == nil
		c.handBack(ctx, l, log)
		if leadErr != nil {
			return leadErr
		}
		if steppedDown {
			// Give the followers one poll interval to take over, and never spin campaign and
			// resign with a command that exits at once.
			_ = timing.Sleep(ctx, c.cfg.DefaultPoll)
		}
	}
	return nil
}

// handBack ends the term l and resigns it on a fresh context (run's own may be cancelled by
// then), so that a follower takes over at once.
func (c *roomEngine) handBack(ctx context.Context, l *swarmlease.Leadership, log *slog.Logger) {
	cause := l.Cause()
	if errors.Is(cause, swarmlease.ErrLost) {
		log.Warn("lost", "reason", cause.Error())
	}
	log.Info("term ended", "reason", endReason(cause))
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, err := l.Resign(rctx)
	switch {
	case errors.Is(cause, swarmlease.ErrLost) && err == nil:
		// The server ended the term: nothing to hand back.
	case err == nil:
		log.Info("released")
	case errors.Is(err, swarmlease.ErrLeaseNotCurrent):
		// The lease had expired already: nothing to hand back either.
	default:
		log.Warn("release failed; unless it reached the server, followers take over when the lease expires", "err", err)
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
