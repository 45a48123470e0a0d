package controller

import (
	"context"
	"log/slog"
	"net/http"
	"reflect"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-chi/chi/v5"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/server/sse"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// InfoBody is the answer of /v1/info.
type InfoBody struct {
	Namespace string `json:"namespace" doc:"The election this server serves." example:"consul-controllers"`
	HolderID  string `json:"holder_id" doc:"This process's holder ID."`
	NodeID    string `json:"node_id" doc:"This process's Swarm node ID."`
	TaskID    string `json:"task_id" doc:"This process's Swarm task ID."`
	Store     string `json:"store" doc:"The store the election lives in." example:"swarm store at unix:///var/run/docker.sock"`
	Version   string `json:"version" doc:"The lfp-swarm-lease version." example:"0.1.0"`
}

// Options configure the controller endpoints.
type Options struct {
	// Election is the election the endpoints serve (required).
	Election *lease.Election
	// Snapshots, when set, feeds the controller instead of a watcher of its own: `run` passes
	// its contender's reads, so that a replica reads the store once, not twice. The owner closes
	// it.
	Snapshots <-chan lease.Snapshot
	// PollInterval is the watcher's poll interval.
	PollInterval time.Duration
	// KeepAlive is the SSE keep-alive interval.
	KeepAlive time.Duration
	// MaxClients bounds the connected clients of /v1/events (0: no bound).
	MaxClients int
	// Version is the product version /v1/info reports.
	Version string
	// Closing is closed when the server shuts down: the streams its handlers write end.
	Closing <-chan struct{}
	// Metrics receives the controller's measurements.
	Metrics Metrics
	// Logger logs the watcher's store errors.
	Logger *slog.Logger
}

// Metrics is what the controller records.
type Metrics interface {
	sse.Metrics
	// StoreError counts a failed read of the election's watcher, by lease.ErrorKind.
	StoreError(kind string)
	// ObservedFence records the fence of the newest snapshot.
	ObservedFence(fence uint64)
}

// Controller serves the controller endpoints of one election: /v1/info, /v1/state and the
// /v1/events stream, all from one watcher of the election.
type Controller struct {
	opts   Options
	events *events
}

// New returns the controller opts describe; Run feeds it.
func New(opts Options) *Controller {
	return &Controller{opts: opts, events: newEvents(opts.MaxClients, opts.KeepAlive, opts.Closing, opts.Metrics)}
}

// Run watches the election — every new record, renewals included, so that /v1/state is never
// stale; stream clients get holder and fence changes only — until ctx ends or Snapshots closes.
func (c *Controller) Run(ctx context.Context) {
	snaps := c.opts.Snapshots
	if snaps == nil {
		snaps = c.opts.Election.WatchRecords(ctx, c.opts.PollInterval, func(err error) {
			c.opts.Metrics.StoreError(lease.ErrorKind(err))
			c.opts.Logger.Debug("watch: store error", "err", err)
		})
	}
	for snap := range snaps {
		c.events.publish(snap)
		c.opts.Metrics.ObservedFence(snap.Fence)
	}
}

// Close ends the streams the hub's fan-out writes, cleanly, and returns once they have ended:
// http.Server.Shutdown neither tracks nor ends hijacked connections.
func (c *Controller) Close() { c.events.hub.Close() }

// Register registers the controller endpoints: the JSON ones on api, the stream on r (and in
// api's contract).
func (c *Controller) Register(api huma.API, r chi.Router) {
	errs := []int{http.StatusServiceUnavailable}
	huma.Register(api, huma.Operation{
		OperationID: "getInfo", Method: http.MethodGet, Path: "/v1/info", Tags: []string{"election"},
		Summary: "The bound election and this process's identity",
	}, func(context.Context, *struct{}) (*wire.Output[InfoBody], error) {
		e := c.opts.Election
		id := e.Identity()
		return wire.NoStore(InfoBody{Namespace: e.Namespace(), HolderID: id.HolderID, NodeID: id.NodeID, TaskID: id.TaskID,
			Store: e.Store().Describe(), Version: c.opts.Version}), nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "getState", Method: http.MethodGet, Path: "/v1/state", Tags: []string{"election"}, Errors: errs,
		Summary:     "The election's current state",
		Description: "The newest snapshot of this process's watcher (event-driven, and at most one poll interval old).",
	}, func(ctx context.Context, _ *struct{}) (*wire.Output[State], error) {
		snap, err := c.events.snapshot(ctx)
		if err != nil {
			e := wire.NewError(ctx, http.StatusServiceUnavailable, "not_ready", "the election has not been read from the store yet", "see /readyz")
			e.RetryAfterMS = wire.RetryAfter.Milliseconds()
			return nil, e
		}
		return wire.NoStore(StateOf(snap)), nil
	})
	r.Get("/v1/events", c.events.serve)
	documentEvents(api)
}

// documentEvents adds GET /v1/events to the contract. The stream itself is a plain handler
// (keep-alive comments and per-write deadlines need the raw writer), but its contract comes
// from the same State type.
func documentEvents(api huma.API) {
	oapi := api.OpenAPI()
	stateSchema := oapi.Components.Schemas.Schema(reflect.TypeFor[State](), true, "State")
	errorSchema := oapi.Components.Schemas.Schema(reflect.TypeFor[wire.ErrorBody](), true, "ErrorBody")
	oapi.AddOperation(&huma.Operation{
		OperationID: "streamEvents", Method: http.MethodGet, Path: "/v1/events", Tags: []string{"election"},
		Summary: "Server-sent events of the election",
		Description: "`text/event-stream`. The first event is `current` with the State; later events are `change`, sent only " +
			"when the holder or the fence changes (routine renewals are suppressed). A comment line (`: keep-alive`) is sent " +
			"every keep-alive interval. Every replica observes the same election, so a client may reconnect to any of them.",
		Responses: map[string]*huma.Response{
			"200": {Description: "The event stream; each event's data is a State.", Content: map[string]*huma.MediaType{
				"text/event-stream": {Schema: stateSchema},
			}},
			"503": {Description: "Too many SSE clients on this server.", Content: map[string]*huma.MediaType{
				"application/json": {Schema: errorSchema},
			}},
		},
	})
}
