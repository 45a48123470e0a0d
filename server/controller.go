package server

import (
	"context"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

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

// registerController registers the JSON controller endpoints and documents the SSE stream.
func (s *Server) registerController() {
	api := s.api
	errs := []int{http.StatusServiceUnavailable}
	huma.Register(api, huma.Operation{
		OperationID: "getInfo", Method: http.MethodGet, Path: "/v1/info", Tags: []string{"election"},
		Summary: "The bound election and this process's identity",
	}, func(context.Context, *struct{}) (*wire.Output[InfoBody], error) {
		e := s.opts.Election
		id := e.Identity()
		return wire.NoStore(InfoBody{Namespace: e.Namespace(), HolderID: id.HolderID, NodeID: id.NodeID, TaskID: id.TaskID,
			Store: e.Store().Describe(), Version: s.opts.Version}), nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "getState", Method: http.MethodGet, Path: "/v1/state", Tags: []string{"election"}, Errors: errs,
		Summary:     "The election's current state",
		Description: "The newest snapshot of this process's watcher (event-driven, and at most one poll interval old).",
	}, func(ctx context.Context, _ *struct{}) (*wire.Output[State], error) {
		snap, err := s.snapshot(ctx)
		if err != nil {
			e := wire.NewError(ctx, http.StatusServiceUnavailable, "not_ready", "the election has not been read from the store yet", "see /readyz")
			e.RetryAfterMS = wire.RetryAfter.Milliseconds()
			return nil, e
		}
		return wire.NoStore(StateOf(snap)), nil
	})
	s.documentEvents()
}

// documentEvents adds GET /v1/events to the contract. The stream itself is a plain handler
// (keep-alive comments and per-write deadlines need the raw writer), but its contract comes
// from the same State type.
func (s *Server) documentEvents() {
	oapi := s.api.OpenAPI()
	stateSchema := oapi.Components.Schemas.Schema(reflect.TypeFor[State](), true, "State")
	errorSchema := oapi.Components.Schemas.Schema(reflect.TypeFor[wire.ErrorBody](), true, "wire.ErrorBody")
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
