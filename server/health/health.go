package health

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/wire"
	"github.com/regbo/lfp-swarm-lease/timing"
)

// HealthBody is the answer of /healthz and /readyz.
type HealthBody struct {
	Status string `json:"status" doc:"\"ok\" or \"ready\"." example:"ok"`
	// Details reports what the store found wrong with itself and worked around (damaged rooms
	// slots, a repaired election file, a recreated file-store directory); empty when nothing.
	Details string `json:"details,omitempty" doc:"Damage the store found and worked around since the server started (never routine; see the log); absent when none."`
}

// Options say what a server's health checks read.
type Options struct {
	// Election is the election the server serves; /readyz reads it. Nil: the server serves the
	// elections API alone.
	Election *lease.Election
	// Rooms runs the elections API's rooms; /readyz reads a shard of them when there is no
	// election, and checks that their store can write. Nil without the elections API.
	Rooms *rooms.Manager
	// Ready, when set, is the readiness of a server with neither an election nor rooms (run
	// --server: whether its elections server answers).
	Ready func(context.Context) error
	// Metrics counts the damage the stores report, and shows the last readiness check.
	Metrics Metrics
	// Logger logs it.
	Logger *slog.Logger
}

// Checks are a server's health checks: /healthz and /readyz, and what the stores report about
// themselves, which /readyz shows.
type Checks struct {
	election *lease.Election
	rooms    *rooms.Manager
	readyFn  func(context.Context) error
	stores   *storeHealth
	metrics  Metrics
	log      *slog.Logger
}

// New returns the checks of the stores opts name, subscribed to their damage reports. A file
// store repairs a damaged election file, and recreates its directory when it was removed: `run`
// counts and logs that as a server of rooms does.
func New(opts Options) *Checks {
	c := &Checks{election: opts.Election, rooms: opts.Rooms, readyFn: opts.Ready, stores: newStoreHealth(opts.Metrics, opts.Logger),
		metrics: opts.Metrics, log: opts.Logger}
	if opts.Election != nil {
		c.stores.watch(opts.Election.Store())
	}
	if opts.Rooms != nil {
		c.stores.watchRooms(opts.Rooms.Store())
	}
	return c
}

// Register registers /healthz and /readyz, which every server has.
func (c *Checks) Register(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "healthz", Method: http.MethodGet, Path: "/healthz", Tags: []string{"health"},
		Summary: "Process liveness", Description: "Answers as long as the process serves HTTP. Never calls the store.",
	}, func(context.Context, *struct{}) (*wire.Output[HealthBody], error) {
		return wire.NoStore(HealthBody{Status: "ok"}), nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "readyz", Method: http.MethodGet, Path: "/readyz", Tags: []string{"health"}, Errors: []int{http.StatusServiceUnavailable},
		Summary: "Store readiness",
		Description: "Reads the store (the election, else a rooms shard): on Swarm this needs a manager whose Swarm has a leader (quorum). " +
			"A file store must also be able to write (space, permissions). Damage the store worked around is in `details`.",
	}, c.ready)
}

// ready is /readyz.
func (c *Checks) ready(ctx context.Context, _ *struct{}) (*wire.Output[HealthBody], error) {
	if err := c.check(ctx); err != nil {
		e := wire.NewError(ctx, http.StatusServiceUnavailable, "not_ready", "the store is not ready", err.Error())
		e.SetRetry(wire.RetryAfter)
		return nil, e
	}
	body := HealthBody{Status: "ready", Details: c.stores.details()}
	return wire.NoStore(body), nil
}

// check is the readiness check of /readyz: it reads the election, else a rooms shard, and
// checks that the rooms' store can write. The metrics show its outcome.
func (c *Checks) check(ctx context.Context) error {
	var err error
	switch {
	case c.readyFn != nil:
		err = c.readyFn(ctx)
	case c.election != nil:
		_, err = c.election.Inspect(ctx)
	default:
		_, err = c.rooms.Status(ctx, readinessRoom)
	}
	if err == nil {
		err = c.stores.checkWritable(ctx)
	}
	c.metrics.Ready(err == nil)
	return err
}

// Monitor runs the readiness check at once and then every interval until ctx ends, so that a
// server whose store is not ready says so without waiting for a probe: at start, then at a
// bounded rate (timing.Failures) with the count and the last cause, and once more when it is
// ready again. A server that a contender feeds (run) leaves this to the contender's log.
func (c *Checks) Monitor(ctx context.Context, interval time.Duration) {
	var failures timing.Failures
	check := func() {
		cctx, cancel := context.WithTimeout(ctx, interval)
		defer cancel()
		err := c.check(cctx)
		switch {
		case ctx.Err() != nil:
		case err != nil:
			if failures.Fail(time.Now(), err) {
				c.log.Warn("store not ready: requests that need it fail until it is", "err", err, "failed_checks", failures.Count(),
					"failing_for", time.Since(failures.Since()).Round(time.Second))
			}
		default:
			if n := failures.Succeed(); n > 0 {
				c.log.Info("store ready", "failed_checks", n)
			}
		}
	}
	check()
	// Started after the first check, so that each later check is due for its report.
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			check()
		}
	}
}

// readinessRoom is the room whose shard /readyz reads on an elections-only server (reading
// never writes; an unknown room is simply vacant).
const readinessRoom = "readiness-probe"
