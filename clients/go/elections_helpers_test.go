package swarmlease

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The elections tests run the client against scripted httptest servers: each test answers
// every request itself, so that protocol edge cases (limits, slow answers, stream ends) are
// exact. The end-to-end tests against the real server are in the cli module.

// testToken is a leader token as the server issues them: 43 characters of base64url.
const testToken = "tok0123456789abcdefghijklmnopqrstuvwxyzABCD"

// testRoom is a valid room id.
const testRoom = "room-0123456789"

// request is one request a scripted server received.
type request struct {
	method, path string
	body         map[string]any
	contentType  string
	at           time.Time
}

// script is a scripted elections server: answer decides every response; every request is
// recorded.
type script struct {
	t      *testing.T
	mu     sync.Mutex
	reqs   []request
	answer func(w http.ResponseWriter, r *http.Request, n int, req request)
	srv    *httptest.Server
}

func newScript(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, n int, req request)) *script {
	s := &script{t: t, answer: answer}
	s.srv = httptest.NewServer(s)
	t.Cleanup(func() { stopServer(s.srv) })
	return s
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := request{method: r.Method, path: r.URL.Path, contentType: r.Header.Get("Content-Type"), at: time.Now()}
	if r.URL.RawQuery != "" {
		s.t.Errorf("request with a query: %s", r.URL)
	}
	if data, _ := io.ReadAll(r.Body); len(data) > 0 {
		if err := json.Unmarshal(data, &req.body); err != nil {
			s.t.Errorf("%s %s: body %q is not JSON: %v", r.Method, r.URL.Path, data, err)
		}
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	total, n := len(s.reqs), 0
	for _, q := range s.reqs {
		if q.path == req.path {
			n++
		}
	}
	s.mu.Unlock()
	w.Header().Set("X-Request-Id", fmt.Sprintf("req_%032x", total))
	s.answer(w, r, n, req)
}

// requests returns a copy of the requests so far.
func (s *script) requests() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]request(nil), s.reqs...)
}

// on returns the requests to path.
func (s *script) on(path string) []request {
	var out []request
	for _, r := range s.requests() {
		if r.path == path {
			out = append(out, r)
		}
	}
	return out
}

func (s *script) client(t *testing.T, opts ...Option) *Client {
	t.Helper()
	el, err := NewClient(s.srv.URL, append(fast(), opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return el
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers with the contract's error shape; retry > 0 adds Retry-After and
// retry_after_ms.
func writeError(w http.ResponseWriter, status int, code string, retry time.Duration) {
	body := map[string]any{"error": code + " happened", "code": code, "details": "a safe sentence", "request_id": w.Header().Get("X-Request-Id")}
	if retry > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(retry/time.Second)))
		body["retry_after_ms"] = retry.Milliseconds()
	}
	writeJSON(w, status, body)
}

func leaderBody(room, candidate string, term uint64, ttl time.Duration) map[string]any {
	return map[string]any{
		"status": "leader", "election_id": room, "leader_token": testToken, "renew_after_ms": ttl.Milliseconds() / 2,
		"leader": map[string]any{"candidate_id": candidate, "term": term, "expires_at": time.Now().Add(ttl).UTC().Format(time.RFC3339Nano)},
	}
}

func followerBody(room, leader string, term uint64, retry time.Duration) map[string]any {
	return map[string]any{
		"status": "follower", "election_id": room, "retry_after_ms": retry.Milliseconds(),
		"leader": map[string]any{"candidate_id": leader, "term": term, "expires_at": time.Now().Add(retry).UTC().Format(time.RFC3339Nano)},
	}
}

// stateFrame is one frame of a room's watch stream.
func stateFrame(room, leader string, term uint64) string {
	frame := map[string]any{"schema_version": 1, "election_id": room, "status": "vacant", "leader": nil, "retry_after_ms": 0,
		"observed_at": time.Now().UTC().Format(time.RFC3339Nano)}
	if leader != "" {
		frame["status"] = "leader"
		frame["leader"] = map[string]any{"candidate_id": leader, "term": term, "expires_at": "2030-01-02T03:04:05.000Z"}
		frame["retry_after_ms"] = 5000
	}
	data, _ := json.Marshal(frame)
	return "event: state\nretry: 1000\ndata: " + string(data) + "\n\n"
}

// logBuffer collects everything logged, at every level, as text.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// noToken fails when text holds the test token.
func noToken(t *testing.T, what, text string) {
	t.Helper()
	if strings.Contains(text, testToken) {
		t.Fatalf("%s contains the leader token: %s", what, text)
	}
}

// recordSleeps replaces the client's waits with records of them (returning at once).
func recordSleeps(el *Client) func() []time.Duration {
	var mu sync.Mutex
	var delays []time.Duration
	el.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		delays = append(delays, d)
		mu.Unlock()
		return ctx.Err()
	}
	return func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Duration(nil), delays...)
	}
}
