package elections

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"
	"github.com/go-chi/chi/v5"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/admission"
	"github.com/regbo/lfp-swarm-lease/server/roomwatch"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// New returns the API opts describe, served by host, after filling and checking its limits.
func New(opts Options, host Host) (*API, error) {
	if err := opts.applyDefaults(); err != nil {
		return nil, err
	}
	adm, err := admission.New(opts.AdmissionPerMinute, opts.MaxTrackedClients)
	if err != nil {
		return nil, err
	}
	return &API{opts: opts, fastBodyMax: min(FastBodyMax, host.MaxBodyBytes), admission: adm, metrics: host.Metrics,
		log: host.Logger, keepAlive: host.KeepAlive, closing: host.Closing,
		watches: roomwatch.New(roomwatch.Options{Rooms: opts.Rooms, Poll: host.PollInterval, MaxStreams: opts.MaxWatches,
			MaxStreamsPerClient: opts.MaxWatchesPerClient, Frame: watchFrame, Metrics: host.Metrics, Logger: host.Logger})}, nil
}

// Register registers the elections endpoints: the operations on api, the watch stream on r (and
// in api's contract).
func (e *API) Register(api huma.API, r chi.Router) {
	tags := []string{"elections"}
	op := func(id electionOp, method, path, summary, desc string, status int, errs ...int) huma.Operation {
		return huma.Operation{
			OperationID: string(id) + "Election", Method: method, Path: path, Tags: tags, Summary: summary,
			Description: desc, DefaultStatus: status, Errors: errs, Middlewares: huma.Middlewares{e.hgate(id)},
			BodyReadTimeout: bodyReadTimeout,
		}
	}
	huma.Register(api, op(opCreate, http.MethodPost, "/elections", "Create a room",
		"Returns a fresh room id (192 random bits). Creating a room stores nothing: its state appears on the first campaign. "+
			"Spends one request of the client's admission budget.",
		http.StatusCreated, http.StatusForbidden, http.StatusTooManyRequests),
		func(ctx context.Context, _ *struct{}) (*createdOutput, error) {
			id := rooms.NewRoomID()
			e.metrics.ElectionRequest(string(opCreate), "ok")
			return &createdOutput{CacheControl: "no-store", Location: "/elections/" + id, Body: CreatedElection{
				ElectionID: id, CampaignPath: "/elections/" + id + "/campaign", StatusPath: "/elections/" + id, WatchPath: "/elections/" + id + "/watch",
			}}, nil
		})
	huma.Register(api, op(opStatus, http.MethodGet, "/elections/{id}", "A room's leader",
		"Always 200 for a valid id: an unknown room is vacant. Never returns the token. Not rate-limited.",
		http.StatusOK, http.StatusBadRequest, http.StatusForbidden, http.StatusServiceUnavailable),
		func(ctx context.Context, in *electionPath) (*wire.Output[ElectionStatus], error) {
			return humaOutput(e.status(ctx, wire.RequestID(ctx), in.ID))
		})
	huma.Register(api, op(opCampaign, http.MethodPost, "/elections/{id}/campaign", "Campaign for a room's leadership",
		"The first live campaign wins a new term and a leader token; everyone else — the live leader campaigning again included — "+
			"is a follower told who leads and when to retry. Check order: 403, 429, then room id, candidate, metadata, ttl (400).",
		http.StatusOK, http.StatusBadRequest, http.StatusForbidden, http.StatusConflict, http.StatusUnsupportedMediaType,
		http.StatusUnprocessableEntity, http.StatusTooManyRequests, http.StatusServiceUnavailable),
		func(ctx context.Context, in *campaignInput) (*wire.Output[CampaignResult], error) {
			return humaOutput(e.campaign(ctx, wire.RequestID(ctx), in.ID, &in.Body))
		})
	huma.Register(api, op(opRenew, http.MethodPost, "/elections/{id}/renew", "Renew a term",
		"Extends the caller's term for ttl_seconds from now (default 30; it may shorten the lease), keeping the term. "+
			"404 lease_not_current when the room is vacant or expired; 400 lease_not_current when another term holds it. Never rate-limited.",
		http.StatusOK, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusUnsupportedMediaType,
		http.StatusUnprocessableEntity, http.StatusServiceUnavailable),
		func(ctx context.Context, in *renewInput) (*wire.Output[CampaignResult], error) {
			return humaOutput(e.renew(ctx, wire.RequestID(ctx), in.ID, &in.Body))
		})
	huma.Register(api, op(opResign, http.MethodPost, "/elections/{id}/resign", "Resign a term",
		"Ends the caller's term at once; the room is vacant and its next term is higher. Errors as for renew. Never rate-limited.",
		http.StatusOK, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusUnsupportedMediaType,
		http.StatusUnprocessableEntity, http.StatusServiceUnavailable),
		func(ctx context.Context, in *resignInput) (*wire.Output[ResignResult], error) {
			return humaOutput(e.resign(ctx, wire.RequestID(ctx), in.ID, &in.Body))
		})
	r.Get("/elections/{id}/watch", e.serveWatch)
	documentWatch(api)
}

// humaOutput is an operation's outcome as a huma handler returns it. (A nil *wire.ErrorBody must not
// become a non-nil error.)
func humaOutput[T any](body T, fail *wire.ErrorBody) (*wire.Output[T], error) {
	if fail != nil {
		return nil, fail
	}
	return wire.NoStore(body), nil
}

// hgate is gate as a huma operation middleware: it runs before huma reads the body.
func (e *API) hgate(op electionOp) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		r, w := humachi.Unwrap(ctx)
		// chi's own parameter: huma's Param reads Request.PathValue, which chi does not fill for
		// every route shape.
		if e.gate(w, r, wire.RequestID(r.Context()), op, chi.URLParam(r, "id")) {
			next(ctx)
		}
	}
}

type electionPath struct {
	ID string `path:"id" doc:"Room id: 8–64 characters of [A-Za-z0-9_-]."`
}

type campaignInput struct {
	ID   string `path:"id" doc:"Room id: 8–64 characters of [A-Za-z0-9_-]."`
	Body CampaignRequest
}

type renewInput struct {
	ID   string `path:"id" doc:"Room id: 8–64 characters of [A-Za-z0-9_-]."`
	Body RenewRequest
}

type resignInput struct {
	ID   string `path:"id" doc:"Room id: 8–64 characters of [A-Za-z0-9_-]."`
	Body ResignRequest
}

type createdOutput struct {
	CacheControl string `header:"Cache-Control"`
	Location     string `header:"Location"`
	Body         CreatedElection
}
