package swarmlease

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/regbo/lfp-swarm-lease/timing"
)

// Client is a client of the elections ("rooms") API of an lfp-swarm-lease server — or of any
// service with the same wire contract: POST /elections, POST /elections/{id}/campaign, /renew,
// /resign, GET /elections/{id} and its /watch stream. It holds only configuration and may be
// used by several goroutines at once.
type Client struct {
	base *url.URL
	cfg  config
	// sleep waits d or until ctx ends; tests replace it to record delays without waiting them.
	sleep func(ctx context.Context, d time.Duration) error
}

// NewClient returns a client of the elections API at baseURL (e.g. "http://elect:8080"; a
// path prefix of a reverse proxy is kept). It sends nothing yet. The options that concern it
// are WithHTTPClient, WithRequestTimeout, WithBackoff, WithIdleTimeout, WithInitialTimeout (of
// WatchRoom), WithLogger and WithJitter; an invalid URL or option is an error.
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	cfg := defaultConfig()
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("swarmlease: invalid base URL %q: %w", baseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("swarmlease: invalid base URL %q: want http:// or https:// and a host", baseURL)
	}
	return &Client{base: u, cfg: cfg, sleep: timing.Sleep}, nil
}

// Limits of the contract that the client checks before sending.
const (
	// MinTTL and MaxTTL bound a lease's TTL; it is a whole number of seconds.
	MinTTL = timing.MinRoomTTL
	MaxTTL = timing.MaxRoomTTL
	// DefaultTTL is the server's TTL when a request gives none (Hold sends it explicitly).
	DefaultTTL = 30 * time.Second
)

// RoomStatus is what a room, or a campaign's caller, is.
type RoomStatus string

// The statuses, spelled as on the wire.
const (
	// StatusLeader: the room has a live leader; for a campaign or renewal, the caller.
	StatusLeader RoomStatus = "leader"
	// StatusFollower: a campaign found another live leader (possibly the caller itself,
	// campaigning again: it gets no second token).
	StatusFollower RoomStatus = "follower"
	// StatusVacant: the room has no live leader.
	StatusVacant RoomStatus = "vacant"
)

// Room is a room created by CreateRoom. Its paths are below the client's base URL.
type Room struct {
	// ID is the room's id: 192 random bits, base64url (32 characters).
	ID string `json:"election_id"`
	// CampaignPath, StatusPath and WatchPath are the room's endpoints.
	CampaignPath string `json:"campaign_path"`
	StatusPath   string `json:"status_path"`
	WatchPath    string `json:"watch_path"`
}

// Leader is a room's current term as everyone may see it. It never carries the token.
type Leader struct {
	// CandidateID is the leader's candidate id (not a unique key).
	CandidateID string `json:"candidate_id"`
	// Metadata is the leader's metadata; empty when it gave none.
	Metadata string `json:"metadata,omitempty"`
	// Term is the term's fence, named as on the wire: strictly increasing within the room, never
	// reused. Hand it to every resource the leader writes to, which must refuse a fence lower
	// than one it has seen.
	Term uint64 `json:"term"`
	// ExpiresAt is when the lease ends unless renewed, by the server's clock: informational.
	// Hold never relies on it (see Leadership.Deadline).
	ExpiresAt time.Time `json:"expires_at"`
}

// CampaignRequest is what a candidate campaigns with.
type CampaignRequest struct {
	// CandidateID is required: 1 to 64 bytes of [A-Za-z0-9._:@-]. Several candidates may share
	// one; the token, not the id, identifies a term.
	CandidateID string
	// TTL is the lease duration: whole seconds from 5 s to 300 s; zero sends none and the
	// server uses DefaultTTL.
	TTL time.Duration
	// Metadata is optional (at most 1024 characters), shown to everyone who reads the room.
	Metadata string
}

// CampaignResult answers Campaign (leader or follower) and Renew (always leader).
type CampaignResult struct {
	// ElectionID is the room.
	ElectionID string
	// Status is StatusLeader (the caller holds the term) or StatusFollower.
	Status RoomStatus
	// Leader is the room's leader: the caller when Status is StatusLeader.
	Leader Leader
	// Token is the term's leader token, for leaders only. It is printed and logged redacted.
	Token LeaderToken
	// RenewAfter is, for leaders, when to renew: half the TTL.
	RenewAfter time.Duration
	// RetryAfter is, for followers, how long until the leader's lease can be taken over.
	RetryAfter time.Duration
}

// IsLeader reports whether the caller holds the term.
func (r CampaignResult) IsLeader() bool { return r.Status == StatusLeader }

// RoomState is a room as GET /elections/{id} and every frame of its watch stream show it.
type RoomState struct {
	// ElectionID is the room.
	ElectionID string
	// Status is StatusLeader or StatusVacant.
	Status RoomStatus
	// Leader is the live leader; nil when the room is vacant.
	Leader *Leader
	// RetryAfter is how long until the leader's lease can be taken over; zero when vacant.
	RetryAfter time.Duration
	// ObservedAt is when the server read the state (watch frames only; zero from Status).
	ObservedAt time.Time
}

// LeaderToken is a leader token: the bearer capability of one term. It is printed (with any fmt
// verb), logged through slog and marshalled as "[redacted]", so that it cannot leak into logs
// by accident; string(token) is the value itself. The client sends it only in request bodies,
// never in a URL.
type LeaderToken string

const redacted = "[redacted]"

// String returns "[redacted]" (or "" for no token).
func (t LeaderToken) String() string {
	if t == "" {
		return ""
	}
	return redacted
}

// GoString returns the same as String.
func (t LeaderToken) GoString() string { return t.String() }

// Format prints String whatever the verb.
func (t LeaderToken) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, t.String()) }

// LogValue logs String.
func (t LeaderToken) LogValue() slog.Value { return slog.StringValue(t.String()) }

// MarshalText marshals String.
func (t LeaderToken) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// CreateRoom asks the server for a new room id. Creating a room stores nothing; campaigning in a
// room of one's own choosing (8 to 64 of [A-Za-z0-9_-]) works as well.
func (c *Client) CreateRoom(ctx context.Context) (Room, error) {
	var room Room
	err := c.do(ctx, "create", http.MethodPost, nil, http.StatusCreated, &room, "elections")
	return room, err
}

// Campaign asks for the room's leadership once. A vacant room makes the caller the leader of a
// new term, with a token; otherwise the result is a follower's, naming the leader and when to
// try again. Hold repeats it until it wins and keeps the term renewed.
func (c *Client) Campaign(ctx context.Context, roomID string, req CampaignRequest) (CampaignResult, error) {
	ttl, err := ttlSeconds(req.TTL)
	if err != nil {
		return CampaignResult{}, err
	}
	body := struct {
		CandidateID string `json:"candidate_id"`
		TTLSeconds  *int64 `json:"ttl_seconds,omitempty"`
		Metadata    string `json:"metadata,omitempty"`
	}{req.CandidateID, ttl, req.Metadata}
	return c.leaderCall(ctx, "campaign", roomID, body)
}

// Renew extends the term of token for ttl from now (zero: the server's DefaultTTL, not the
// campaign's TTL), keeping the term. It fails with ErrVacant (the lease expired or was
// resigned) or ErrHeldByOther (another term holds the room) when the term is over.
func (c *Client) Renew(ctx context.Context, roomID string, token LeaderToken, ttl time.Duration) (CampaignResult, error) {
	secs, err := ttlSeconds(ttl)
	if err != nil {
		return CampaignResult{}, err
	}
	body := struct {
		LeaderToken string `json:"leader_token"`
		TTLSeconds  *int64 `json:"ttl_seconds,omitempty"`
	}{string(token), secs}
	return c.leaderCall(ctx, "renew", roomID, body)
}

// Resign ends the term of token at once, so that another candidate can win the room without
// waiting for the lease to expire, and returns the term that ended. Errors as for Renew.
func (c *Client) Resign(ctx context.Context, roomID string, token LeaderToken) (previousTerm uint64, err error) {
	if err := checkRoomID(roomID); err != nil {
		return 0, err
	}
	var out struct {
		PreviousTerm uint64 `json:"previous_term"`
	}
	body := struct {
		LeaderToken string `json:"leader_token"`
	}{string(token)}
	err = c.do(ctx, "resign", http.MethodPost, body, http.StatusOK, &out, "elections", roomID, "resign")
	return out.PreviousTerm, err
}

// Status returns the room's current state; a room nobody campaigned in is vacant.
func (c *Client) Status(ctx context.Context, roomID string) (RoomState, error) {
	if err := checkRoomID(roomID); err != nil {
		return RoomState{}, err
	}
	var w wireRoomState
	if err := c.do(ctx, "status", http.MethodGet, nil, http.StatusOK, &w, "elections", roomID); err != nil {
		return RoomState{}, err
	}
	return w.state(), nil
}

// wireRoomState is the JSON of GET /elections/{id}. (A watch frame has more fields and is
// checked field by field: see roomFrameDecoder.)
type wireRoomState struct {
	ElectionID   string     `json:"election_id"`
	Status       RoomStatus `json:"status"`
	Leader       *Leader    `json:"leader"`
	RetryAfterMS int64      `json:"retry_after_ms"`
}

func (w wireRoomState) state() RoomState {
	return RoomState{ElectionID: w.ElectionID, Status: w.Status, Leader: w.Leader, RetryAfter: millis(w.RetryAfterMS)}
}

// leaderCall sends a campaign or a renewal and decodes the answer.
func (c *Client) leaderCall(ctx context.Context, op, roomID string, body any) (CampaignResult, error) {
	if err := checkRoomID(roomID); err != nil {
		return CampaignResult{}, err
	}
	var w struct {
		Status       RoomStatus `json:"status"`
		ElectionID   string     `json:"election_id"`
		Leader       Leader     `json:"leader"`
		LeaderToken  string     `json:"leader_token"`
		RenewAfterMS int64      `json:"renew_after_ms"`
		RetryAfterMS int64      `json:"retry_after_ms"`
	}
	if err := c.do(ctx, op, http.MethodPost, body, http.StatusOK, &w, "elections", roomID, op); err != nil {
		return CampaignResult{}, err
	}
	res := CampaignResult{ElectionID: w.ElectionID, Status: w.Status, Leader: w.Leader, Token: LeaderToken(w.LeaderToken),
		RenewAfter: millis(w.RenewAfterMS), RetryAfter: millis(w.RetryAfterMS)}
	if res.Status == StatusLeader && res.Token == "" {
		return CampaignResult{}, fmt.Errorf("swarmlease: %s %s: a leader answer without a leader token", op, roomID)
	}
	if res.Status != StatusLeader && res.Status != StatusFollower {
		return CampaignResult{}, fmt.Errorf("swarmlease: %s %s: unknown status %q", op, roomID, res.Status)
	}
	return res, nil
}

// maxBody bounds a successful answer: every answer of the contract is well under 4 KiB.
const maxBody = 1 << 20

// do sends one request below the base URL (path elements are escaped) within the request
// timeout and decodes a want-status answer into out; any other answer is an *APIError.
// Network errors name the operation and the URL, which never holds a token.
func (c *Client) do(ctx context.Context, op, method string, body any, want int, out any, path ...string) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.requestTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("swarmlease: %s: encode request: %w", op, err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.JoinPath(path...).String(), rd)
	if err != nil {
		return fmt.Errorf("swarmlease: %s: %w", op, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.cfg.client.Do(req)
	if err != nil {
		return fmt.Errorf("swarmlease: %s: %w", op, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		return apiErrorOf(resp)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBody)).Decode(out); err != nil {
		return fmt.Errorf("swarmlease: %s: decode the answer (HTTP %d, request %s): %w", op, resp.StatusCode, resp.Header.Get("X-Request-Id"), err)
	}
	return nil
}

// checkRoomID refuses what the server would refuse, before it goes into a URL path.
func checkRoomID(id string) error {
	if len(id) < 8 || len(id) > 64 {
		return fmt.Errorf("%w: election id %q: want 8 to 64 letters, digits, '_' or '-'", ErrInvalidInput, id)
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return fmt.Errorf("%w: election id %q: want 8 to 64 letters, digits, '_' or '-'", ErrInvalidInput, id)
		}
	}
	return nil
}

// ttlSeconds is the wire form of a TTL: nil for zero (the server's default), else whole
// seconds. The range is the server's to check, so that its answer (invalid_ttl) is the one
// the caller sees.
func ttlSeconds(ttl time.Duration) (*int64, error) {
	if ttl == 0 {
		return nil, nil
	}
	if ttl < 0 || ttl%time.Second != 0 {
		return nil, fmt.Errorf("%w: %v: want a whole number of seconds from %d to %d", ErrInvalidTTL, ttl, int(MinTTL/time.Second), int(MaxTTL/time.Second))
	}
	s := int64(ttl / time.Second)
	return &s, nil
}

func millis(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
