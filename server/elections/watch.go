package elections

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-chi/chi/v5"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/clientip"
	"github.com/regbo/lfp-swarm-lease/server/connlimit"
	"github.com/regbo/lfp-swarm-lease/server/sse"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// watchFrame is the SSE event of a room's state st, read at at.
func watchFrame(st rooms.RoomState, at time.Time) []byte {
	body := statusBody(st)
	data, err := json.Marshal(WatchFrame{SchemaVersion: 1, ElectionID: st.RoomID, Status: body.Status, Leader: body.Leader,
		RetryAfterMS: body.RetryAfterMS, ObservedAt: wire.Time(at)})
	if err != nil { // plain fields only: cannot happen
		panic("elections: encode watch frame: " + err.Error())
	}
	return sse.Event("state", watchRetry, data)
}

// watchRetry is the reconnection delay every watch frame asks for.
const watchRetry = time.Second

// serveWatch is GET /elections/{id}/watch: a snapshot frame, then a frame per change, a
// keep-alive comment every keep-alive interval, until the client leaves, the stream lags, the
// store fails, the server shuts down or the stream's lifetime ends.
func (e *API) serveWatch(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	if !e.gate(w, r, wire.RequestID(r.Context()), opWatch, id) || sse.Head(w, r) {
		return
	}
	ctx := r.Context()
	sub, err := e.watches.Subscribe(ctx, clientip.Key(r, e.opts.TrustedProxies), id)
	if err != nil {
		body := wire.NewError(ctx, http.StatusTooManyRequests, "rate_limited", "too many watch streams", err.Error())
		body.SetRetry(time.Second)
		e.metrics.ElectionRequest(string(opWatch), body.Code)
		wire.WriteErrorBody(w, body)
		return
	}
	defer e.watches.Unsubscribe(sub)
	// The first state comes from the shard's loop like every later one (see roomwatch.Stream).
	var first []byte
	wait := time.NewTimer(sse.FirstFrameWait)
	defer wait.Stop()
	select {
	case first = <-sub.Frames():
	case <-sub.Done():
		wire.WriteErrorBody(w, e.fail(wire.RequestID(ctx), opWatch, sub.Err()))
		return
	case <-wait.C:
		wire.WriteErrorBody(w, e.fail(wire.RequestID(ctx), opWatch, fmt.Errorf("no read of the room within %v: %w", sse.FirstFrameWait, lease.ErrUnavailable)))
		return
	case <-ctx.Done():
		return
	}
	e.metrics.ElectionRequest(string(opWatch), "ok")
	connlimit.MarkStream(ctx) // at the connection bound, a stream may be shed for a new connection

	stream := sse.Open(w)
	if stream.Write(first) != nil {
		return
	}
	// Streams opened together would all end together and reconnect in one burst: each lives
	// its lifetime minus up to a tenth, at random.
	ctx, cancel := context.WithTimeout(ctx, e.opts.WatchLifetime-rand.N(e.opts.WatchLifetime/10+1))
	defer cancel()
	stream.Pump(ctx, sub.Stream, e.keepAlive, e.closing)
}

// documentWatch adds GET /elections/{id}/watch to the contract; like /v1/events it is a plain
// handler whose contract comes from the WatchFrame type.
func documentWatch(api huma.API) {
	oapi := api.OpenAPI()
	frameSchema := oapi.Components.Schemas.Schema(reflect.TypeFor[WatchFrame](), true, "WatchFrame")
	errorSchema := oapi.Components.Schemas.Schema(reflect.TypeFor[wire.ErrorBody](), true, "ErrorBody")
	errResp := func(desc string) *huma.Response {
		return &huma.Response{Description: desc, Content: map[string]*huma.MediaType{"application/json": {Schema: errorSchema}}}
	}
	oapi.AddOperation(&huma.Operation{
		OperationID: "watchElection", Method: http.MethodGet, Path: "/elections/{id}/watch", Tags: []string{"elections"},
		Summary: "Server-sent events of a room",
		Description: "`text/event-stream`. Every event is `event: state` with `retry: 1000` and a WatchFrame as data. The first " +
			"frame is the current snapshot; later frames follow changes (duplicates are possible). No event ids; `Last-Event-ID` " +
			"is ignored. A comment line is sent every keep-alive interval (15 s). The stream closes when the client lags, on a " +
			"store failure, and after the server's maximum stream lifetime (900 s by default); clients reconnect.",
		Parameters: []*huma.Param{{Name: "id", In: "path", Required: true, Description: "Room id: 8–64 characters of [A-Za-z0-9_-].",
			Schema: &huma.Schema{Type: huma.TypeString}}},
		Responses: map[string]*huma.Response{
			"200": {Description: "The event stream; each event's data is a WatchFrame.", Content: map[string]*huma.MediaType{
				"text/event-stream": {Schema: frameSchema},
			}},
			"400": errResp("Invalid room id (invalid_input)."),
			"403": errResp("Public elections are disabled (forbidden)."),
			"429": errResp("Too many watch streams from this client or on this server (rate_limited, with Retry-After)."),
			"503": errResp("The store is unavailable."),
		},
	})
}
