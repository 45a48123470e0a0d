package elections

import (
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

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

// WatchFrame is the data of every event of GET /elections/{id}/watch.
type WatchFrame struct {
	SchemaVersion int             `json:"schema_version" enum:"1" doc:"The frame's schema version: 1."`
	ElectionID    string          `json:"election_id"`
	Status        string          `json:"status" enum:"leader,vacant"`
	Leader        *ElectionLeader `json:"leader" doc:"The live leader, or null when vacant. Never the token."`
	RetryAfterMS  int64           `json:"retry_after_ms" doc:"Milliseconds until the leader's lease can be taken over; 0 when vacant."`
	ObservedAt    string          `json:"observed_at" format:"date-time" doc:"When this server read the state (RFC 3339, UTC)."`
}
