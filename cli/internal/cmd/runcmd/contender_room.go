package runcmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/server"
	"github.com/regbo/lfp-swarm-lease/timing"
)

// roomRun is run with a server configured: it contends for a room of the elections server
// instead of the Swarm lease, and supervises the command exactly as on the lease. The room's
// state is the elections server's to serve; with listen set (it is off by default in this mode)
// run serves /healthz, /readyz — whether the elections server answers — and /metrics.
func roomRun(ctx context.Context, opts *Options, cfg *config.Config, log *slog.Logger) error {
	log = log.With("server", cfg.Server)
	leaders := &leaderLog{log: log}
	metrics := server.NewMetrics()
	probe := &serverProbe{next: http.DefaultTransport, metrics: metrics}
	room, err := newRoomEngine(cfg, log, leaders.onLeader, probe)
	if err != nil {
		return err
	}
	leaders.self = lease.Identity{HolderID: room.id.HolderID}
	if cfg.Source(config.KeyListen).Kind != config.FromDefault && cfg.Listen != config.ListenOff {
		cmdutil.RegisterLogDrops(metrics.Registry(), opts.IO.Err)
		srvOpts, err := cmdutil.ServerOptions(cfg, metrics, log)
		if err != nil {
			return err
		}
		ln, err := cmdutil.Listen(cfg, true)
		if err != nil {
			return err
		}
		srvOpts.Ready = probe.ready
		// Stopped once the term is handed back, as run's API on the lease.
		httpCtx, stopHTTP := context.WithCancel(context.WithoutCancel(ctx))
		served := make(chan error, 1)
		go func() { served <- cmdutil.Serve(httpCtx, srvOpts, log, ln, "election", cfg.ElectionID) }()
		defer func() { stopHTTP(); <-served }()
	}
	log.Info("contending", "namespace", cfg.ElectionID, "holder_id", room.id.HolderID, "ttl", cfg.TTL)
	return contend(ctx, opts, cfg, room, nil, log)
}

// roomEngine wins terms of a room of an elections server through a swarmlease.RoomContender, and
// logs each term's transitions as a lease.Contender does: acquired, lost, term ended,
// released.
type roomEngine struct {
	cfg       *config.Config
	contender *swarmlease.RoomContender
	id        lease.Identity // the candidate id as HolderID, run's node and task ids
	log       *slog.Logger
	metrics   *server.Metrics
}

// newRoomEngine checks run's settings for the room and builds its contender, whose requests go
// through probe; following receives each leader the contender learns of while it follows.
func newRoomEngine(cfg *config.Config, log *slog.Logger, following func(wonTerm), probe *serverProbe) (*roomEngine, error) {
	// The candidate id is the holder ID (by default the hostname, made a valid candidate id by
	// the configuration), which RequireRemote checks.
	if err := cfg.RequireRemote(); err != nil {
		return nil, cmdutil.Usage(err)
	}
	candidate := cfg.Identity.HolderID
	// The client's own lines (failed requests) name the server as run's do.
	el, err := swarmlease.NewClient(cfg.Server, swarmlease.WithLogger(log), swarmlease.WithHTTPClient(&http.Client{Transport: probe}))
	if err != nil {
		return nil, cmdutil.Usage(fmt.Errorf("invalid %s (from %s): %w", config.KeyServer, cfg.Source(config.KeyServer), err))
	}
	holdOpts := []swarmlease.HoldOption{swarmlease.WithStopBefore(cfg.ShutdownTimeout), swarmlease.WithFollowing(func(l swarmlease.Leader) {
		following(wonTerm{Fence: l.Term, Holder: lease.Identity{HolderID: l.CandidateID}, Namespace: cfg.ElectionID})
	})}
	if cfg.RenewInterval > 0 {
		holdOpts = append(holdOpts, swarmlease.WithRenewInterval(cfg.RenewInterval))
	}
	contender, err := el.NewRoomContender(cfg.ElectionID, swarmlease.CampaignRequest{CandidateID: candidate, TTL: cfg.TTL}, holdOpts...)
	if err != nil {
		return nil, holdError(cfg, err)
	}
	return &roomEngine{cfg: cfg, contender: contender, log: log, metrics: probe.metrics,
		id: lease.Identity{HolderID: candidate, NodeID: cfg.Identity.NodeID, TaskID: cfg.Identity.TaskID}}, nil
}

// Contend implements engine.
func (c *roomEngine) Contend(ctx context.Context, lead func(wonTerm) error) error {
	for ctx.Err() == nil {
		l, err := c.contender.Hold(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return holdError(c.cfg, err)
		}
		t := wonTerm{Fence: l.Fence(), Holder: c.id, Namespace: c.cfg.ElectionID, Done: l.Done(), Cause: l.Cause,
			Remaining: func() time.Duration { return time.Until(l.Deadline()) }, Renewed: l.Renewed()}
		log := c.log.With(t.logAttrs()...)
		log.Info("acquired", "expires_at", l.Leader().ExpiresAt, "safety_deadline", l.Deadline())
		c.metrics.Leading(t.Fence, true)
		leadErr := lead(t)
		steppedDown := l.Cause() == nil
		c.handBack(ctx, l, log)
		c.metrics.Leading(t.Fence, false)
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

// serverProbe is the transport of every request run sends to its elections server: it measures
// them for /metrics (store_request_duration_seconds and store_request_errors_total, store
// "server") and remembers whether the server answers, for /readyz. A request without an answer,
// or answered with a server error, is a failure; any other answer shows the server is there.
type serverProbe struct {
	next    http.RoundTripper
	metrics *server.Metrics

	mu       sync.Mutex
	failures timing.Failures
	answered bool
}

// RoundTrip implements http.RoundTripper.
func (p *serverProbe) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := p.next.RoundTrip(req)
	failure := err
	if err == nil && resp.StatusCode >= http.StatusInternalServerError {
		failure = fmt.Errorf("HTTP %s", resp.Status)
	}
	p.metrics.StoreRequest("server", requestOp(req), time.Since(start), failure)
	p.mu.Lock()
	defer p.mu.Unlock()
	if failure != nil {
		p.failures.Fail(time.Now(), failure)
	} else {
		p.failures.Succeed()
		p.answered = true
	}
	return resp, err
}

// ready is run's readiness with a server: nil once the elections server has answered, and as
// long as its last request was answered.
func (p *serverProbe) ready(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := p.failures.Count(); n > 0 {
		return fmt.Errorf("the elections server failed %d requests in a row since %s; the last: %v",
			n, p.failures.Since().UTC().Format(time.RFC3339), p.failures.Last())
	}
	if !p.answered {
		return errors.New("the elections server has not answered yet")
	}
	return nil
}

// requestOp names a request of the elections API by what it does: create, status, campaign,
// renew, resign, watch.
func requestOp(req *http.Request) string {
	i := strings.Index(req.URL.Path, "/elections")
	if i < 0 {
		return "other"
	}
	rest := req.URL.Path[i+len("/elections"):]
	_, action, found := strings.Cut(strings.TrimPrefix(rest, "/"), "/")
	switch {
	case rest == "" || rest == "/":
		return "create"
	case !found:
		return "status"
	}
	return action
}
