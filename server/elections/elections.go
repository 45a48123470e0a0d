package elections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"
	"github.com/go-chi/chi/v5"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/admission"
	"github.com/regbo/lfp-swarm-lease/server/clientip"
	"github.com/regbo/lfp-swarm-lease/server/roomwatch"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// Options configure the elections ("rooms") API: the wire contract of docs/elections-api.md on
// top of a rooms.Manager. Zero limits take the defaults below.
type Options struct {
	// Rooms runs the rooms (required).
	Rooms *rooms.Manager
	// Disabled answers every elections endpoint with 403 forbidden.
	Disabled bool
	// AdmissionPerMinute is each client's budget of room creations and campaigns per minute
	// (default DefaultAdmissionPerMinute; negative: unlimited). Status, renew and resign are
	// exempt, so that load can never strand a current leader.
	AdmissionPerMinute int
	// MaxTrackedClients bounds the table of clients with a budget (default
	// DefaultMaxTrackedClients).
	MaxTrackedClients int
	// TrustedProxies are the peers whose X-Forwarded-For header names the client; every other
	// peer is the client itself (see clientip.ParseTrustedProxies).
	TrustedProxies []netip.Prefix
	// MaxWatchesPerClient and MaxWatches bound concurrent watch streams per client and in
	// total (defaults DefaultMaxWatchesPerClient, DefaultMaxWatches).
	MaxWatchesPerClient int
	MaxWatches          int
	// WatchLifetime ends a watch stream after this long (default DefaultWatchLifetime); the
	// client reconnects.
	WatchLifetime time.Duration
}

// Defaults of the elections API's limits (the seed service's where it has one).
const (
	DefaultAdmissionPerMinute  = 600
	DefaultMaxTrackedClients   = 65_536
	DefaultMaxWatchesPerClient = 32
	DefaultMaxWatches          = 10_000
	DefaultWatchLifetime       = 900 * time.Second
)

func (o *Options) applyDefaults() error {
	if o.Rooms == nil {
		return errors.New("elections: the API needs a rooms manager")
	}
	if o.AdmissionPerMinute == 0 {
		o.AdmissionPerMinute = DefaultAdmissionPerMinute
	}
	if o.MaxTrackedClients <= 0 {
		o.MaxTrackedClients = DefaultMaxTrackedClients
	}
	if o.MaxWatchesPerClient <= 0 {
		o.MaxWatchesPerClient = DefaultMaxWatchesPerClient
	}
	if o.MaxWatches <= 0 {
		o.MaxWatches = DefaultMaxWatches
	}
	if o.WatchLifetime <= 0 {
		o.WatchLifetime = DefaultWatchLifetime
	}
	return nil
}

// Wire types of the elections API. Field names, omissions and formats follow docs/elections-api.md
// exactly: a client of the seed service works against this server by changing its base URL.

// CreatedElection is the answer of POST /elections.
type CreatedElection struct {
	ElectionID   string `json:"election_id" doc:"The new room's id: 192 random bits, base64url without padding." example:"q3Zb0nJ8m1v0cJ2h0sZ8H1tU9a7yW4eR"`
	CampaignPath string `json:"campaign_path" example:"/elections/q3Zb0nJ8m1v0cJ2h0sZ8H1tU9a7yW4eR/campaign"`
	StatusPath   string `json:"status_path" example:"/elections/q3Zb0nJ8m1v0cJ2h0sZ8H1tU9a7yW4eR"`
	WatchPath    string `json:"watch_path" example:"/elections/q3Zb0nJ8m1v0cJ2h0sZ8H1tU9a7yW4eR/watch"`
}

// ElectionLeader is a room's current leader. It never carries the token.
type ElectionLeader struct {
	CandidateID string `json:"candidate_id" doc:"The leader's candidate id." example:"worker-a"`
	Metadata    string `json:"metadata,omitempty" doc:"The leader's metadata; omitted when it gave none."`
	Term        uint64 `json:"term" doc:"The fencing term: strictly increasing within the room, never reused." example:"1842"`
	ExpiresAt   string `json:"expires_at" format:"date-time" doc:"When the lease ends unless renewed (RFC 3339, UTC)." example:"2026-11-29T12:00:30.000Z"`
}

// CampaignRequest is the body of POST /elections/{id}/campaign. Unknown fields are ignored.
type CampaignRequest struct {
	_           struct{} `json:"-" additionalProperties:"true"`
	CandidateID string   `json:"candidate_id,omitempty" doc:"Required: 1–64 bytes of [A-Za-z0-9._:@-]. Not a unique key." example:"worker-a"`
	TTLSeconds  *TTL     `json:"ttl_seconds,omitempty" nullable:"true" doc:"Lease duration, 5–300 seconds (default 30)." example:"30"`
	Metadata    *string  `json:"metadata,omitempty" nullable:"true" doc:"Optional, at most 1024 characters; shown to everyone who reads the room."`
}

// RenewRequest is the body of POST /elections/{id}/renew. Unknown fields are ignored.
type RenewRequest struct {
	_           struct{} `json:"-" additionalProperties:"true"`
	LeaderToken string   `json:"leader_token,omitempty" doc:"The token of the term to renew."`
	TTLSeconds  *TTL     `json:"ttl_seconds,omitempty" nullable:"true" doc:"New lease duration from now, 5–300 seconds (default 30, not the original TTL)." example:"30"`
}

// ResignRequest is the body of POST /elections/{id}/resign. Unknown fields are ignored.
type ResignRequest struct {
	_           struct{} `json:"-" additionalProperties:"true"`
	LeaderToken string   `json:"leader_token,omitempty" doc:"The token of the term to end."`
}

// TTL is ttl_seconds: a JSON integer. A whole number written as a decimal (30.0, 3e1) counts as
// that integer; any other number — fractional, negative, huge — is kept as invalid, so that the
// engine answers 400 invalid_ttl rather than the decoder a type error.
type TTL struct {
	seconds int64
	valid   bool
	// whole: a whole number, as the contract's schema (an integer) wants; huma refuses a
	// fractional one (422) before the engine sees it, and so the fast path leaves it to huma.
	whole bool
}

// Schema implements huma.SchemaProvider: on the wire, an integer.
func (TTL) Schema(huma.Registry) *huma.Schema { return &huma.Schema{Type: huma.TypeInteger} }

// UnmarshalJSON implements json.Unmarshaler.
func (t *TTL) UnmarshalJSON(b []byte) error { return t.parse(string(b)) }

// parse sets t from the JSON number text.
func (t *TTL) parse(text string) error {
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return errors.New("want an integer") // wire.ExactFields names the field
	}
	*t = TTL{whole: f == math.Trunc(f)}
	if t.whole && f >= 0 && f <= 1e6 {
		t.seconds, t.valid = int64(f), true
	}
	return nil
}

// integer: t is absent, null or a whole number, which the contract's schema takes.
func (t *TTL) integer() bool { return t == nil || t.whole }

// duration is the requested TTL, or the contract's default when absent; invalid values give a
// duration the engine refuses.
func (t *TTL) duration() time.Duration {
	switch {
	case t == nil:
		return rooms.DefaultTTL
	case !t.valid:
		return -1
	}
	return time.Duration(t.seconds) * time.Second
}

// UnmarshalJSON implements json.Unmarshaler with exact field names.
func (r *CampaignRequest) UnmarshalJSON(b []byte) error {
	*r = CampaignRequest{}
	return wire.ExactFields(b, map[string]any{"candidate_id": &r.CandidateID, "ttl_seconds": &r.TTLSeconds, "metadata": &r.Metadata})
}

// UnmarshalJSON implements json.Unmarshaler with exact field names.
func (r *RenewRequest) UnmarshalJSON(b []byte) error {
	*r = RenewRequest{}
	return wire.ExactFields(b, map[string]any{"leader_token": &r.LeaderToken, "ttl_seconds": &r.TTLSeconds})
}

// UnmarshalJSON implements json.Unmarshaler with exact field names.
func (r *ResignRequest) UnmarshalJSON(b []byte) error {
	*r = ResignRequest{}
	return wire.ExactFields(b, map[string]any{"leader_token": &r.LeaderToken})
}

// The request bodies' fields by their exact wire names, for wire.FieldDecoder: SetField's index
// is a position in these.
var (
	campaignFields = []string{"candidate_id", "ttl_seconds", "metadata"}
	renewFields    = []string{"leader_token", "ttl_seconds"}
	resignFields   = []string{"leader_token"}
)

// Fields implements wire.FieldDecoder, with the fields of UnmarshalJSON.
func (r *CampaignRequest) Fields() []string { return campaignFields }

// Reset implements wire.FieldDecoder.
func (r *CampaignRequest) Reset() { *r = CampaignRequest{} }

// SetField implements wire.FieldDecoder.
func (r *CampaignRequest) SetField(i int, kind jsontext.Kind, text string) bool {
	switch i {
	case 0:
		return setString(&r.CandidateID, kind, text)
	case 1:
		return setTTL(&r.TTLSeconds, kind, text)
	case 2:
		r.Metadata = new(string)
		return setString(r.Metadata, kind, text)
	}
	return false
}

// Fields implements wire.FieldDecoder.
func (r *RenewRequest) Fields() []string { return renewFields }

// Reset implements wire.FieldDecoder.
func (r *RenewRequest) Reset() { *r = RenewRequest{} }

// SetField implements wire.FieldDecoder.
func (r *RenewRequest) SetField(i int, kind jsontext.Kind, text string) bool {
	switch i {
	case 0:
		return setString(&r.LeaderToken, kind, text)
	case 1:
		return setTTL(&r.TTLSeconds, kind, text)
	}
	return false
}

// Fields implements wire.FieldDecoder.
func (r *ResignRequest) Fields() []string { return resignFields }

// Reset implements wire.FieldDecoder.
func (r *ResignRequest) Reset() { *r = ResignRequest{} }

// SetField implements wire.FieldDecoder.
func (r *ResignRequest) SetField(i int, kind jsontext.Kind, text string) bool {
	if i != 0 {
		return false
	}
	return setString(&r.LeaderToken, kind, text)
}

// setString sets a string field from a JSON string.
func setString(dst *string, kind jsontext.Kind, text string) bool {
	if kind != '"' {
		return false
	}
	*dst = text
	return true
}

// setTTL sets ttl_seconds from a JSON number, as TTL.UnmarshalJSON does.
func setTTL(dst **TTL, kind jsontext.Kind, text string) bool {
	if kind != '0' {
		return false
	}
	t := new(TTL)
	if t.parse(text) != nil {
		return false
	}
	*dst = t
	return true
}

// CampaignResult answers a campaign (leader or follower) and a renewal (always leader).
type CampaignResult struct {
	Status       string         `json:"status" enum:"leader,follower" doc:"leader: the caller holds the term; follower: someone else (or the caller itself, campaigning again) does."`
	ElectionID   string         `json:"election_id"`
	Leader       ElectionLeader `json:"leader"`
	LeaderToken  string         `json:"leader_token,omitempty" doc:"Leaders only: the bearer capability for this term (256 bits, base64url). Keep it out of URLs and logs."`
	RenewAfterMS *int64         `json:"renew_after_ms,omitempty" doc:"Leaders only: renew after this many milliseconds (half the TTL)." example:"15000"`
	RetryAfterMS *int64         `json:"retry_after_ms,omitempty" doc:"Followers only: milliseconds until the leader's lease can be taken over." example:"29876"`
}

// ResignResult answers POST /elections/{id}/resign.
type ResignResult struct {
	ElectionID   string `json:"election_id"`
	Status       string `json:"status" enum:"vacant"`
	PreviousTerm uint64 `json:"previous_term" doc:"The term that ended."`
}

// ElectionStatus answers GET /elections/{id}; an unknown room is vacant.
type ElectionStatus struct {
	ElectionID   string          `json:"election_id"`
	Status       string          `json:"status" enum:"leader,vacant"`
	Leader       *ElectionLeader `json:"leader,omitempty" doc:"The live leader; omitted when vacant."`
	RetryAfterMS int64           `json:"retry_after_ms" doc:"Milliseconds until the leader's lease can be taken over; 0 when vacant."`
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

// Host is what the API takes from the server that serves it.
type Host struct {
	// MaxBodyBytes is the server's bound on request bodies.
	MaxBodyBytes int64
	// PollInterval is how often the watch streams' rooms are read without a change
	// notification.
	PollInterval time.Duration
	// KeepAlive is the SSE keep-alive interval.
	KeepAlive time.Duration
	// Closing is closed when the server shuts down: the watch streams end.
	Closing <-chan struct{}
	// Metrics receives the API's measurements.
	Metrics Metrics
	// Logger logs failed requests and reads.
	Logger *slog.Logger
}

// Metrics is what the API records.
type Metrics interface {
	roomwatch.Metrics
	// ElectionRequest counts one request by operation and outcome (ok, leader, follower, or
	// the error code).
	ElectionRequest(op, outcome string)
}

// API serves the elections API: its huma operations, its watch stream, and the fast path
// (ServeFast) that answers the hot operations ahead of the router.
type API struct {
	opts Options
	// fastBodyMax bounds the bodies the fast path reads: the constant FastBodyMax, or the
	// server's body limit where that is lower.
	fastBodyMax int64
	admission   *admission.Budget
	watches     *roomwatch.Watches
	metrics     Metrics
	log         *slog.Logger
	keepAlive   time.Duration
	closing     <-chan struct{}
}

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

// electionOp names an elections endpoint for the gate and the metrics.
type electionOp string

const (
	opCreate   electionOp = "create"
	opStatus   electionOp = "status"
	opCampaign electionOp = "campaign"
	opRenew    electionOp = "renew"
	opResign   electionOp = "resign"
	opWatch    electionOp = "watch"
)

// budgeted: the operations that spend the client's admission budget.
func (op electionOp) budgeted() bool { return op == opCreate || op == opCampaign }

// hasBody: the operations that take a JSON body.
func (op electionOp) hasBody() bool { return op == opCampaign || op == opRenew || op == opResign }

// gate runs the checks that precede the body, in the contract's order: disabled (403), budget
// (429), room id (400), content type (415). It writes the error of the request requestID and
// returns false when one fails.
func (e *API) gate(w http.ResponseWriter, r *http.Request, requestID string, op electionOp, roomID string) bool {
	fail := func(status int, code, msg, details string, retry time.Duration) bool {
		e.metrics.ElectionRequest(string(op), code)
		body := wire.NewErrorFor(requestID, status, code, msg, details)
		if retry > 0 {
			body.SetRetry(retry)
		}
		wire.WriteErrorBody(w, body)
		return false
	}
	if e.opts.Disabled {
		return fail(http.StatusForbidden, "forbidden", "public elections are disabled on this server",
			"the operator turned the elections API off", 0)
	}
	if op.budgeted() && e.admission.Limited() { // unlimited: no client key to work out
		if ok, retry := e.admission.Allow(clientip.Key(r, e.opts.TrustedProxies), time.Now()); !ok {
			return fail(http.StatusTooManyRequests, "rate_limited", "too many room creations and campaigns from this client",
				fmt.Sprintf("the budget is %d per minute per client; retry after the Retry-After delay", e.opts.AdmissionPerMinute), retry)
		}
	}
	if op != opCreate {
		if err := rooms.ValidateRoomID(roomID); err != nil {
			return fail(http.StatusBadRequest, "invalid_input", "invalid election id", "the election id must be 8 to 64 letters, digits, '_' or '-'", 0)
		}
	}
	if op.hasBody() {
		// Media types are case-insensitive, and parameters (charset=UTF-8) do not change
		// JSON (always UTF-8); huma looks its formats up by the exact string, so it gets the
		// canonical one.
		// The canonical spelling, which clients send, needs neither parsing nor rewriting.
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			mt, _, err := mime.ParseMediaType(ct)
			if err != nil || mt != "application/json" {
				return fail(http.StatusUnsupportedMediaType, "invalid_input", "the body must be JSON",
					"send Content-Type: application/json", 0)
			}
			r.Header.Set("Content-Type", mt)
		}
	}
	return true
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
			return answer(e.status(ctx, wire.RequestID(ctx), in.ID))
		})
	huma.Register(api, op(opCampaign, http.MethodPost, "/elections/{id}/campaign", "Campaign for a room's leadership",
		"The first live campaign wins a new term and a leader token; everyone else — the live leader campaigning again included — "+
			"is a follower told who leads and when to retry. Check order: 403, 429, then room id, candidate, metadata, ttl (400).",
		http.StatusOK, http.StatusBadRequest, http.StatusForbidden, http.StatusConflict, http.StatusUnsupportedMediaType,
		http.StatusUnprocessableEntity, http.StatusTooManyRequests, http.StatusServiceUnavailable),
		func(ctx context.Context, in *campaignInput) (*wire.Output[CampaignResult], error) {
			return answer(e.campaign(ctx, wire.RequestID(ctx), in.ID, &in.Body))
		})
	huma.Register(api, op(opRenew, http.MethodPost, "/elections/{id}/renew", "Renew a term",
		"Extends the caller's term for ttl_seconds from now (default 30; it may shorten the lease), keeping the term. "+
			"404 lease_not_current when the room is vacant or expired; 400 lease_not_current when another term holds it. Never rate-limited.",
		http.StatusOK, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusUnsupportedMediaType,
		http.StatusUnprocessableEntity, http.StatusServiceUnavailable),
		func(ctx context.Context, in *renewInput) (*wire.Output[CampaignResult], error) {
			return answer(e.renew(ctx, wire.RequestID(ctx), in.ID, &in.Body))
		})
	huma.Register(api, op(opResign, http.MethodPost, "/elections/{id}/resign", "Resign a term",
		"Ends the caller's term at once; the room is vacant and its next term is higher. Errors as for renew. Never rate-limited.",
		http.StatusOK, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusUnsupportedMediaType,
		http.StatusUnprocessableEntity, http.StatusServiceUnavailable),
		func(ctx context.Context, in *resignInput) (*wire.Output[ResignResult], error) {
			return answer(e.resign(ctx, wire.RequestID(ctx), in.ID, &in.Body))
		})
	r.Get("/elections/{id}/watch", e.serveWatch)
	documentWatch(api)
}

// The operations behind status, campaign, renew and resign, for huma's handlers and the fast
// path alike: each calls the engine and counts its outcome; an engine error comes back as the
// wire.ErrorBody of the request requestID.

func (e *API) status(ctx context.Context, requestID, roomID string) (ElectionStatus, *wire.ErrorBody) {
	st, err := e.opts.Rooms.Status(ctx, roomID)
	if err != nil {
		return ElectionStatus{}, e.fail(requestID, opStatus, err)
	}
	e.metrics.ElectionRequest(string(opStatus), "ok")
	return statusBody(st), nil
}

func (e *API) campaign(ctx context.Context, requestID, roomID string, in *CampaignRequest) (CampaignResult, *wire.ErrorBody) {
	var metadata string
	if in.Metadata != nil {
		metadata = *in.Metadata
	}
	res, err := e.opts.Rooms.Campaign(ctx, roomID, in.CandidateID, in.TTLSeconds.duration(), metadata)
	if err != nil {
		return CampaignResult{}, e.fail(requestID, opCampaign, err)
	}
	e.metrics.ElectionRequest(string(opCampaign), string(res.Status))
	return campaignBody(res), nil
}

func (e *API) renew(ctx context.Context, requestID, roomID string, in *RenewRequest) (CampaignResult, *wire.ErrorBody) {
	res, err := e.opts.Rooms.Renew(ctx, roomID, in.LeaderToken, in.TTLSeconds.duration())
	if err != nil {
		return CampaignResult{}, e.fail(requestID, opRenew, err)
	}
	e.metrics.ElectionRequest(string(opRenew), "ok")
	return campaignBody(res), nil
}

func (e *API) resign(ctx context.Context, requestID, roomID string, in *ResignRequest) (ResignResult, *wire.ErrorBody) {
	prev, err := e.opts.Rooms.Resign(ctx, roomID, in.LeaderToken)
	if err != nil {
		return ResignResult{}, e.fail(requestID, opResign, err)
	}
	e.metrics.ElectionRequest(string(opResign), "ok")
	return ResignResult{ElectionID: roomID, Status: string(rooms.StatusVacant), PreviousTerm: prev}, nil
}

// answer is an operation's outcome as a huma handler returns it. (A nil *wire.ErrorBody must not
// become a non-nil error.)
func answer[T any](body T, fail *wire.ErrorBody) (*wire.Output[T], error) {
	if fail != nil {
		return nil, fail
	}
	return wire.NoStore(body), nil
}

// fail maps an engine error of the request requestID to the contract's status and code.
func (e *API) fail(requestID string, op electionOp, err error) *wire.ErrorBody {
	var body *wire.ErrorBody
	var capacity *rooms.CapacityError
	switch {
	case errors.Is(err, rooms.ErrInvalidTTL):
		body = wire.NewErrorFor(requestID, http.StatusBadRequest, "invalid_ttl", "invalid ttl_seconds", "ttl_seconds must be a whole number from 5 to 300")
	case errors.Is(err, rooms.ErrInvalidRoomID):
		body = wire.NewErrorFor(requestID, http.StatusBadRequest, "invalid_input", "invalid election id", "the election id must be 8 to 64 letters, digits, '_' or '-'")
	case errors.Is(err, rooms.ErrInvalidCandidate):
		body = wire.NewErrorFor(requestID, http.StatusBadRequest, "invalid_input", "invalid candidate_id", "candidate_id is required: 1 to 64 letters, digits, '.', '_', ':', '@' or '-'")
	case errors.Is(err, rooms.ErrInvalidMetadata):
		body = wire.NewErrorFor(requestID, http.StatusBadRequest, "invalid_input", "invalid metadata", "metadata must be valid UTF-8 of at most 1024 characters")
	case errors.Is(err, rooms.ErrInvalidToken):
		body = wire.NewErrorFor(requestID, http.StatusBadRequest, "invalid_input", "malformed leader_token", "leader_token must be the 43-character token a winning campaign returned")
	case errors.Is(err, rooms.ErrVacant):
		body = wire.NewErrorFor(requestID, http.StatusNotFound, "lease_not_current", "no current lease", "the room is vacant or the lease expired; campaign again")
	case errors.Is(err, rooms.ErrNotCurrent):
		body = wire.NewErrorFor(requestID, http.StatusBadRequest, "lease_not_current", "the lease is not current", "another term holds the room; campaign again")
	case errors.As(err, &capacity):
		body = wire.NewErrorFor(requestID, http.StatusConflict, "capacity_exceeded", "too many active rooms", capacityDetails(capacity))
		body.SetRetry(capacity.RetryAfter)
	case errors.Is(err, context.Canceled):
		body = wire.NewErrorFor(requestID, 499, "canceled", "the request was canceled", "")
	case errors.Is(err, lease.ErrStoreFull):
		// Nothing partial was written; the store takes writes again once space returns.
		body = wire.NewErrorFor(requestID, http.StatusServiceUnavailable, "unavailable", "the election store is out of space", lease.ErrorKind(err))
		body.SetRetry(wire.RetryAfter)
	case errors.Is(err, lease.ErrPermission):
		// An operator has to fix the store's files (the log names them); retrying is harmless.
		body = wire.NewErrorFor(requestID, http.StatusServiceUnavailable, "unavailable", "the election store refuses access to its files", lease.ErrorKind(err))
		body.SetRetry(wire.RetryAfter)
	case errors.Is(err, lease.ErrUnavailable), errors.Is(err, lease.ErrNoQuorum), errors.Is(err, lease.ErrNotManager),
		errors.Is(err, lease.ErrTooManyConflicts), errors.Is(err, lease.ErrAmbiguous), errors.Is(err, context.DeadlineExceeded):
		// Store trouble: the outcome is unknown or the store is away; a retry is safe (a
		// campaign that did win is answered as a follower seeing itself).
		body = wire.NewErrorFor(requestID, http.StatusServiceUnavailable, "unavailable", "the election store is unavailable", lease.ErrorKind(err))
		body.SetRetry(time.Second)
	default:
		// Corrupt shards and anything unexpected: no internals in the body; the log has them.
		body = wire.NewErrorFor(requestID, http.StatusInternalServerError, "internal_error", "internal error", "see the server log for "+requestID)
	}
	if body.GetStatus() >= 500 {
		// Engine and store errors name rooms and stores, never tokens (only hashes reach the
		// engine's documents, and errors carry no document).
		e.log.Warn("elections: request failed", "operation", string(op), "request_id", requestID, "status", body.GetStatus(), "err", err)
	}
	e.metrics.ElectionRequest(string(op), body.Code)
	return body
}

func capacityDetails(c *rooms.CapacityError) string {
	if errors.Is(c, rooms.ErrShardFull) {
		return "this room's shard is full; retry later"
	}
	return fmt.Sprintf("%d of %d rooms are active; retry later", c.Active, c.Max)
}

func leaderBody(l rooms.Leader) ElectionLeader {
	return ElectionLeader{CandidateID: l.CandidateID, Metadata: l.Metadata, Term: l.Term, ExpiresAt: wire.Time(l.ExpiresAt)}
}

func campaignBody(r rooms.Result) CampaignResult {
	out := CampaignResult{Status: string(r.Status), ElectionID: r.RoomID, Leader: leaderBody(r.Leader)}
	if r.Status == rooms.StatusLeader {
		renew := r.RenewAfter.Milliseconds()
		out.LeaderToken, out.RenewAfterMS = r.Token, &renew
	} else {
		retry := r.RetryAfter.Milliseconds()
		out.RetryAfterMS = &retry
	}
	return out
}

func statusBody(st rooms.RoomState) ElectionStatus {
	out := ElectionStatus{ElectionID: st.RoomID, Status: string(st.Status), RetryAfterMS: st.RetryAfter.Milliseconds()}
	if st.Leader != nil {
		l := leaderBody(*st.Leader)
		out.Leader = &l
	}
	return out
}
