package elections

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/clientip"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

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
