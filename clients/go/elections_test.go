package swarmlease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

const (
	campaignPath = "/elections/" + testRoom + "/campaign"
	renewPath    = "/elections/" + testRoom + "/renew"
	resignPath   = "/elections/" + testRoom + "/resign"
	statusPath   = "/elections/" + testRoom
	watchPath    = "/elections/" + testRoom + "/watch"
)

// TestElectionsCalls: every call sends the contract's request — JSON body, the token only in
// the body — and decodes the contract's answer into typed fields.
func TestElectionsCalls(t *testing.T) {
	s := newScript(t, func(w http.ResponseWriter, r *http.Request, n int, _ request) {
		switch r.URL.Path {
		case "/elections":
			writeJSON(w, http.StatusCreated, map[string]string{"election_id": testRoom, "campaign_path": campaignPath,
				"status_path": statusPath, "watch_path": watchPath})
		case campaignPath:
			if n == 1 {
				body := leaderBody(testRoom, "a", 7, 5*time.Second)
				body["leader"].(map[string]any)["metadata"] = "node 1"
				writeJSON(w, http.StatusOK, body)
			} else {
				writeJSON(w, http.StatusOK, followerBody(testRoom, "a", 7, 4321*time.Millisecond))
			}
		case renewPath:
			writeJSON(w, http.StatusOK, leaderBody(testRoom, "a", 7, 6*time.Second))
		case resignPath:
			writeJSON(w, http.StatusOK, map[string]any{"election_id": testRoom, "status": "vacant", "previous_term": 7})
		case statusPath:
			writeJSON(w, http.StatusOK, map[string]any{"election_id": testRoom, "status": "leader", "retry_after_ms": 1500,
				"leader": map[string]any{"candidate_id": "a", "term": 7, "expires_at": "2030-01-02T03:04:05.678Z"}})
		default:
			writeError(w, http.StatusNotFound, "not_found", 0)
		}
	})
	el := s.client(t)
	ctx := context.Background()

	room, err := el.CreateRoom(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if room.ID != testRoom || room.CampaignPath != campaignPath || room.StatusPath != statusPath || room.WatchPath != watchPath {
		t.Fatalf("room = %+v", room)
	}

	won, err := el.Campaign(ctx, testRoom, CampaignRequest{CandidateID: "a", TTL: 5 * time.Second, Metadata: "node 1"})
	if err != nil {
		t.Fatal(err)
	}
	if !won.IsLeader() || won.Token != testToken || won.Leader.Term != 7 || won.Leader.CandidateID != "a" ||
		won.Leader.Metadata != "node 1" || won.RenewAfter != 2500*time.Millisecond || won.RetryAfter != 0 || won.Leader.ExpiresAt.IsZero() {
		t.Fatalf("leader result = %+v", won)
	}
	lost, err := el.Campaign(ctx, testRoom, CampaignRequest{CandidateID: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if lost.Status != StatusFollower || lost.Token != "" || lost.RetryAfter != 4321*time.Millisecond || lost.Leader.CandidateID != "a" {
		t.Fatalf("follower result = %+v", lost)
	}

	renewed, err := el.Renew(ctx, testRoom, won.Token, 6*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !renewed.IsLeader() || renewed.Leader.Term != 7 || renewed.RenewAfter != 3*time.Second {
		t.Fatalf("renew result = %+v", renewed)
	}
	st, err := el.Status(ctx, testRoom)
	if err != nil {
		t.Fatal(err)
	}
	wantExpiry := time.Date(2030, 1, 2, 3, 4, 5, 678e6, time.UTC)
	if st.Status != StatusLeader || st.Leader == nil || st.Leader.Term != 7 || !st.Leader.ExpiresAt.Equal(wantExpiry) || st.RetryAfter != 1500*time.Millisecond {
		t.Fatalf("status = %+v", st)
	}
	prev, err := el.Resign(ctx, testRoom, won.Token)
	if err != nil || prev != 7 {
		t.Fatalf("resign = %d, %v; want 7", prev, err)
	}

	// The requests, as the contract has them.
	reqs := s.requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests, want 6", len(reqs))
	}
	for _, r := range reqs {
		if strings.Contains(r.path, testToken) {
			t.Fatalf("the token is in a URL: %s", r.path)
		}
		if r.body != nil && r.contentType != "application/json" {
			t.Fatalf("%s %s: content type %q", r.method, r.path, r.contentType)
		}
	}
	expectBody(t, reqs[1], map[string]any{"candidate_id": "a", "ttl_seconds": 5.0, "metadata": "node 1"})
	expectBody(t, reqs[2], map[string]any{"candidate_id": "b"}) // no TTL: the server's default
	expectBody(t, reqs[3], map[string]any{"leader_token": testToken, "ttl_seconds": 6.0})
	expectBody(t, reqs[5], map[string]any{"leader_token": testToken})
	if reqs[0].method != http.MethodPost || reqs[0].body != nil || reqs[4].method != http.MethodGet {
		t.Fatalf("create/status requests: %+v %+v", reqs[0], reqs[4])
	}
}

func expectBody(t *testing.T, r request, want map[string]any) {
	t.Helper()
	got, _ := json.Marshal(r.body)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Fatalf("%s %s: body %s, want %s", r.method, r.path, got, exp)
	}
}

// TestElectionsErrors: each error of the contract is an *APIError with its code, request id and
// Retry-After, matched by exactly the sentinels it means — and never showing the token.
func TestElectionsErrors(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
		retry  time.Duration
		is     []error
	}{
		{http.StatusNotFound, "lease_not_current", 0, []error{ErrLeaseNotCurrent, ErrVacant}},
		{http.StatusBadRequest, "lease_not_current", 0, []error{ErrLeaseNotCurrent, ErrHeldByOther}},
		{http.StatusTooManyRequests, "rate_limited", 3 * time.Second, []error{ErrRateLimited}},
		{http.StatusConflict, "capacity_exceeded", 2 * time.Second, []error{ErrCapacityExceeded}},
		{http.StatusBadRequest, "invalid_input", 0, []error{ErrInvalidInput}},
		{http.StatusBadRequest, "invalid_ttl", 0, []error{ErrInvalidTTL}},
		{http.StatusForbidden, "forbidden", 0, []error{ErrForbidden}},
		{http.StatusServiceUnavailable, "unavailable", time.Second, nil},
	} {
		t.Run(fmt.Sprintf("%d %s", tc.status, tc.code), func(t *testing.T) {
			s := newScript(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ request) {
				writeError(w, tc.status, tc.code, tc.retry)
			})
			_, err := s.client(t).Renew(context.Background(), testRoom, testToken, 5*time.Second)
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v is no *APIError", err)
			}
			if apiErr.StatusCode != tc.status || apiErr.Code != tc.code || apiErr.RetryAfter != tc.retry ||
				!requestIDPattern(apiErr.RequestID) || apiErr.Details == "" {
				t.Fatalf("APIError = %+v", apiErr)
			}
			all := []error{ErrLeaseNotCurrent, ErrVacant, ErrHeldByOther, ErrRateLimited, ErrCapacityExceeded, ErrInvalidInput, ErrInvalidTTL, ErrForbidden}
			for _, sentinel := range all {
				want := false
				for _, w := range tc.is {
					want = want || w == sentinel
				}
				if errors.Is(err, sentinel) != want {
					t.Errorf("errors.Is(%v, %v) = %v, want %v", err, sentinel, !want, want)
				}
			}
			noToken(t, "the error", err.Error()+fmt.Sprintf(" %+v %#v", err, err))
			if !strings.Contains(err.Error(), tc.code) || !strings.Contains(err.Error(), apiErr.RequestID) {
				t.Fatalf("error %q names neither code nor request id", err)
			}
		})
	}
	// A network failure names the operation and the URL — which holds no token.
	el, err := NewClient("http://"+deadAddr(t), fast()...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = el.Resign(context.Background(), testRoom, testToken)
	if err == nil || !strings.Contains(err.Error(), "resign") {
		t.Fatalf("resign on a dead address: %v", err)
	}
	noToken(t, "the network error", err.Error())
}

func requestIDPattern(id string) bool {
	return len(id) == 36 && strings.HasPrefix(id, "req_")
}

// TestElectionsRefusedLocally: what the server would refuse for certain never leaves the
// process: room ids that are not 8–64 of [A-Za-z0-9_-] (they would be URL paths) and TTLs that
// are not whole seconds.
func TestElectionsRefusedLocally(t *testing.T) {
	s := newScript(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ request) {
		writeError(w, http.StatusTeapot, "unexpected", 0)
	})
	el := s.client(t)
	ctx := context.Background()
	for _, room := range []string{"short", "has/slash-1234", "../../elections", "query?x=1234567", strings.Repeat("r", 65), "ümlaut-12345"} {
		if _, err := el.Campaign(ctx, room, CampaignRequest{CandidateID: "a"}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("campaign in %q: %v, want ErrInvalidInput", room, err)
		}
		if _, err := el.Status(ctx, room); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("status of %q: %v, want ErrInvalidInput", room, err)
		}
		for range el.WatchRoom(ctx, room) {
			break
		}
	}
	for _, ttl := range []time.Duration{1500 * time.Millisecond, -time.Second} {
		if _, err := el.Renew(ctx, testRoom, testToken, ttl); !errors.Is(err, ErrInvalidTTL) {
			t.Errorf("renew with TTL %v: %v, want ErrInvalidTTL", ttl, err)
		}
	}
	if n := len(s.requests()); n != 0 {
		t.Fatalf("%d requests reached the server", n)
	}
}

func TestNewElectionsRefusesBadSettings(t *testing.T) {
	for _, tc := range []struct {
		url  string
		opts []Option
	}{
		{"elect:8080", nil},
		{"ftp://elect", nil},
		{"http://", nil},
		{"http://elect", []Option{WithRequestTimeout(0)}},
		{"http://elect", []Option{WithHTTPClient(nil)}},
	} {
		if _, err := NewClient(tc.url, tc.opts...); err == nil {
			t.Errorf("NewClient(%q) accepted", tc.url)
		}
	}
}

// TestTokenRedacted: a token printed with any verb, logged or marshalled shows nothing of
// itself.
func TestTokenRedacted(t *testing.T) {
	tok := LeaderToken(testToken)
	res := CampaignResult{Status: StatusLeader, Token: tok}
	var logs logBuffer
	logs.logger().Info("result", "token", tok, "result", res)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("result", "token", tok, "result", res)
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf("%v %+v %#v %s %q %x %d", tok, res, res, tok, tok, tok, tok) + logs.String() + string(data)
	noToken(t, "printed, logged and marshalled tokens", text)
	if !strings.Contains(text, "[redacted]") {
		t.Fatalf("no redaction marker in %s", text)
	}
	if string(tok) != testToken || LeaderToken("").String() != "" {
		t.Fatal("the token's value is lost")
	}
}

// TestWatchRoom: the watch yields the snapshot and the changes, reconnects after every end of
// stream, suppresses the snapshot replayed by a reconnect, honours a 429's Retry-After, and
// ends with the error of an answer that retrying cannot change.
func TestWatchRoom(t *testing.T) {
	s := newScript(t, func(w http.ResponseWriter, r *http.Request, n int, _ request) {
		if r.URL.Path != watchPath || r.Header.Get("Accept") != "text/event-stream" {
			writeError(w, http.StatusNotFound, "not_found", 0)
			return
		}
		switch n {
		case 1: // the snapshot, a change, then the stream ends (its lifetime, say)
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, stateFrame(testRoom, "", 0)+": keep-alive\n\n"+stateFrame(testRoom, "a", 1))
		case 2: // a reconnect: the same state again (suppressed), a duplicate, then a change
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, stateFrame(testRoom, "a", 1)+stateFrame(testRoom, "a", 1)+stateFrame(testRoom, "b", 2))
		case 3:
			writeError(w, http.StatusTooManyRequests, "rate_limited", 2*time.Second)
		case 4:
			writeError(w, http.StatusServiceUnavailable, "unavailable", 0)
		default:
			writeError(w, http.StatusForbidden, "forbidden", 0)
		}
	})
	el := s.client(t)
	delays := recordSleeps(el)
	var got []string
	var last error
	for st, err := range el.WatchRoom(context.Background(), testRoom) {
		if err != nil {
			last = err
			continue
		}
		if st.ElectionID != testRoom || st.ObservedAt.IsZero() {
			t.Fatalf("state %+v", st)
		}
		if st.Leader == nil {
			got = append(got, string(st.Status))
		} else {
			got = append(got, fmt.Sprintf("%s %s/%d", st.Status, st.Leader.CandidateID, st.Leader.Term))
		}
	}
	if want := "vacant,leader a/1,leader b/2"; strings.Join(got, ",") != want {
		t.Fatalf("states %q, want %q", got, want)
	}
	if !errors.Is(last, ErrForbidden) {
		t.Fatalf("last value %v, want ErrForbidden", last)
	}
	// After streams that delivered: the shortest back-off; after the 429: its Retry-After;
	// after the 503: the back-off again (no jitter in these tests).
	if d := delays(); len(d) != 4 || d[0] != 5*time.Millisecond || d[1] != 5*time.Millisecond || d[2] != 2*time.Second || d[3] != 5*time.Millisecond {
		t.Fatalf("delays %v, want [5ms 5ms 2s 5ms]", d)
	}
}

// TestWatchRoomInitialTimeout: without any state within the initial timeout, the watch ends
// with ErrInitialTimeout wrapping the last failure.
func TestWatchRoomInitialTimeout(t *testing.T) {
	s := newScript(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ request) {
		writeError(w, http.StatusServiceUnavailable, "unavailable", 0)
	})
	el := s.client(t, WithInitialTimeout(200*time.Millisecond))
	start := time.Now()
	var last error
	for _, err := range el.WatchRoom(context.Background(), testRoom) {
		last = err
	}
	var apiErr *APIError
	if !errors.Is(last, ErrInitialTimeout) || !errors.As(last, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("last value %v, want ErrInitialTimeout wrapping the 503", last)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the watch took %v to give up", d)
	}
}
