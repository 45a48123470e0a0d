package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/elections"
)

// The elections fast path (elections_fast.go) must answer exactly as huma does. These tests
// run two servers in the same state — one with the fast path, one with huma alone — send both
// the same requests, and compare the answers byte for byte (the random parts made equal: the
// request ID, the leader tokens, the Date header), and the metrics they counted.

// failingStore is a rooms memory store that fails every shard call with err while err is set.
type failingStore struct {
	*rooms.MemoryStore
	err atomic.Pointer[error]
}

func (s *failingStore) failure() error {
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *failingStore) LoadShard(ctx context.Context, key rooms.ShardKey) ([]byte, lease.Version, error) {
	if err := s.failure(); err != nil {
		return nil, 0, err
	}
	return s.MemoryStore.LoadShard(ctx, key)
}

func (s *failingStore) CreateShard(ctx context.Context, key rooms.ShardKey, data []byte) (lease.Version, error) {
	if err := s.failure(); err != nil {
		return 0, err
	}
	return s.MemoryStore.CreateShard(ctx, key, data)
}

func (s *failingStore) UpdateShard(ctx context.Context, key rooms.ShardKey, data []byte, expected lease.Version) (lease.Version, error) {
	if err := s.failure(); err != nil {
		return 0, err
	}
	return s.MemoryStore.UpdateShard(ctx, key, data, expected)
}

// pairServer is one server of a fastPair.
type pairServer struct {
	s     *Server
	store *failingStore
	base  string // host:port of its listener, if it serves over TCP
	// tokens are the leader tokens its answers gave, by room; seen is every one ever given.
	tokens map[string]string
	seen   []string
	// routed counts the requests that reached the router (not served by the fast path).
	routed atomic.Int64
}

// fastPair is a server with the fast path and one without, in the same state.
type fastPair struct {
	fast, huma *pairServer
}

// pairStart is when the pair's clocks stand: expiries and retry delays are the same on both.
var pairStart = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// newFastPair builds the pair with opts (its Elections' Rooms is made here, for each server),
// serving over loopback TCP when tcp is set.
func newFastPair(t testing.TB, opts Options, tcp bool, roomOpts ...rooms.Option) *fastPair {
	t.Helper()
	p := &fastPair{}
	for i, slot := range []**pairServer{&p.fast, &p.huma} {
		store := &failingStore{MemoryStore: rooms.NewMemoryStore()}
		m, err := rooms.New(store, "diff", append([]rooms.Option{rooms.WithMaxClockSkew(0), rooms.WithClock(leasetest.NewFakeClock(pairStart))}, roomOpts...)...)
		if err != nil {
			t.Fatal(err)
		}
		o := opts
		eo := *opts.Elections
		eo.Rooms = m
		o.Elections = &eo
		o.Logger = slog.New(slog.DiscardHandler)
		s, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		ps := &pairServer{s: s, store: store, tokens: map[string]string{}}
		router := s.handler.router
		s.handler.router = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ps.routed.Add(1)
			router.ServeHTTP(w, r)
		})
		if i == 1 {
			s.handler.fast = nil // huma alone
		}
		if tcp {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); _ = s.Serve(ctx, ln) }()
			t.Cleanup(func() { cancel(); <-done })
			ps.base = ln.Addr().String()
		}
		*slot = ps
	}
	return p
}

// Whether the fast path must serve a request.
type fastness int

const (
	anyPath  fastness = iota // either: the test compares the answers only
	fastPath                 // the fast path serves it
	humaPath                 // the router (huma) serves it
)

// wireCase is one request of the corpus. Its body's {{TOKEN}} is the room's current leader
// token on each server.
type wireCase struct {
	name    string
	method  string // POST when empty
	target  string // request target; the op of the room when it has no '/'
	headers []string
	body    string
	// raw: the body is sent as it is, without a Content-Length header (the headers say how).
	raw   bool
	path  fastness
	setup func(*pairServer) // run on each server before the request
}

const diffRoom = "diff-room-0001"

// target is c's request target.
func (c wireCase) requestTarget() string {
	if strings.HasPrefix(c.target, "/") {
		return c.target
	}
	return "/elections/" + diffRoom + "/" + c.target
}

func (c wireCase) requestMethod() string {
	if c.method == "" {
		return http.MethodPost
	}
	return c.method
}

// roomOf is the room a request target names ("" if none).
func roomOf(target string) string {
	rest, ok := strings.CutPrefix(target, "/elections/")
	if !ok {
		return ""
	}
	room, _, _ := strings.Cut(rest, "/")
	room, _, _ = strings.Cut(room, "?")
	return room
}

var (
	requestIDs   = regexp.MustCompile(`req_[0-9a-f]{32}`)
	dateHeader   = regexp.MustCompile(`(?m)^Date: [^\r]*\r$`)
	leaderTokens = regexp.MustCompile(`"leader_token":"([A-Za-z0-9_-]{43})"`)
)

// body is c's body as ps receives it.
func (ps *pairServer) body(c wireCase) string {
	return strings.ReplaceAll(c.body, "{{TOKEN}}", ps.tokens[roomOf(c.requestTarget())])
}

// normalize makes the random parts of an answer of ps equal on both servers, and records the
// leader tokens it gave.
func (ps *pairServer) normalize(room, answer string) string {
	if m := leaderTokens.FindStringSubmatch(answer); m != nil {
		ps.tokens[room] = m[1]
		ps.seen = append(ps.seen, m[1])
	}
	for _, tok := range ps.seen {
		answer = strings.ReplaceAll(answer, tok, "<token>")
	}
	answer = requestIDs.ReplaceAllString(answer, "req_<id>")
	return dateHeader.ReplaceAllString(answer, "Date: <date>\r")
}

// sendWire sends c to ps over a new connection and returns the answer's bytes as they came,
// interim answers (100 Continue) included.
func (ps *pairServer) sendWire(t *testing.T, c wireCase) string {
	t.Helper()
	conn, err := net.Dial("tcp", ps.base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	body := ps.body(c)
	var req bytes.Buffer
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: diff.test\r\n", c.requestMethod(), c.requestTarget())
	for _, h := range c.headers {
		req.WriteString(h + "\r\n")
	}
	if !c.raw {
		fmt.Fprintf(&req, "Content-Length: %d\r\n", len(body))
	}
	req.WriteString("\r\n" + body)
	if _, err := conn.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	br := bufio.NewReader(io.TeeReader(conn, &raw))
	for {
		resp, err := http.ReadResponse(br, &http.Request{Method: c.requestMethod()})
		if err != nil {
			t.Fatalf("%s: reading the answer: %v (so far %q)", c.name, err, raw.String())
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: reading the answer's body: %v", c.name, err)
		}
		if resp.StatusCode != http.StatusContinue {
			if br.Buffered() > 0 {
				t.Fatalf("%s: %d bytes after the answer", c.name, br.Buffered())
			}
			return raw.String()
		}
	}
}

// sendWire sends c to both servers and compares the answers; it returns the fast server's.
func (p *fastPair) sendWire(t *testing.T, c wireCase) string {
	t.Helper()
	var answers [2]string
	for i, ps := range []*pairServer{p.fast, p.huma} {
		if c.setup != nil {
			c.setup(ps)
		}
		routed := ps.routed.Load()
		answers[i] = ps.normalize(roomOf(c.requestTarget()), ps.sendWire(t, c))
		if i == 0 {
			viaRouter := ps.routed.Load() > routed
			if c.path == fastPath && viaRouter || c.path == humaPath && !viaRouter {
				t.Errorf("%s: served by the router: %v, want %v", c.name, viaRouter, c.path == humaPath)
			}
		}
	}
	if answers[0] != answers[1] {
		t.Errorf("%s: the answers differ\nfast path: %q\nhuma:      %q", c.name, answers[0], answers[1])
	}
	if !strings.Contains(answers[0], "X-Request-Id: req_<id>\r\n") {
		t.Errorf("%s: no request ID: %q", c.name, answers[0])
	}
	return answers[0]
}

// compareMetrics checks that both servers counted the same elections requests.
func (p *fastPair) compareMetrics(t *testing.T) {
	t.Helper()
	var counts [2]string
	for i, ps := range []*pairServer{p.fast, p.huma} {
		families, err := ps.s.Metrics().Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			if f.GetName() != "lfp_swarm_lease_election_requests_total" {
				continue
			}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					counts[i] += l.GetName() + "=" + l.GetValue() + " "
				}
				counts[i] += fmt.Sprintf("%v\n", m.GetCounter().GetValue())
			}
		}
	}
	if counts[0] == "" || counts[0] != counts[1] {
		t.Errorf("the request counts differ\nfast path: %s\nhuma:      %s", counts[0], counts[1])
	}
}

// storeFails makes a server's store fail with err (nil: work again).
func storeFails(err error) func(*pairServer) {
	return func(ps *pairServer) {
		if err == nil {
			ps.store.err.Store(nil)
			return
		}
		ps.store.err.Store(&err)
	}
}

const jsonCT = "Content-Type: application/json"

// fakeToken is shaped like a leader token. Where a body's token is not inside a JSON string,
// the token's characters decide what the decoder says (where the syntax error is), and the two
// servers' real tokens differ: such bodies use this one.
var fakeToken = strings.Repeat("T", 42) + "0"

// wireCorpus is the differential corpus, in order: each request sees the state the earlier ones
// left.
func wireCorpus() []wireCase {
	token := func(extra string) string { return `{"leader_token":"{{TOKEN}}"` + extra + `}` }
	long := strings.Repeat("m", elections.FastBodyMax)
	cases := []wireCase{
		{name: "status of a vacant room", method: http.MethodGet, target: "/elections/" + diffRoom, path: fastPath},
		{name: "campaign", target: "campaign", headers: []string{jsonCT}, body: `{"candidate_id":"a","ttl_seconds":30}`, path: fastPath},
		{name: "campaign again", target: "campaign", headers: []string{jsonCT}, body: `{"candidate_id":"a","ttl_seconds":30}`, path: fastPath},
		{name: "campaign of another", target: "campaign", headers: []string{jsonCT}, body: ` { "candidate_id" : "b", "metadata" : "m", "ttl_seconds" : null } `, path: fastPath},
		{name: "status of a led room", method: http.MethodGet, target: "/elections/" + diffRoom, path: fastPath},
		{name: "status with a query", method: http.MethodGet, target: "/elections/" + diffRoom + "?x=1", path: fastPath},
		{name: "status with a body", method: http.MethodGet, target: "/elections/" + diffRoom, headers: []string{"Content-Type: text/plain"}, body: "x", path: fastPath},
		{name: "status, HEAD", method: http.MethodHead, target: "/elections/" + diffRoom, path: humaPath},
		{name: "status of an invalid room", method: http.MethodGet, target: "/elections/bad", path: humaPath},
		{name: "renew", target: "renew", headers: []string{jsonCT}, body: token(`,"ttl_seconds":30`), path: fastPath},
		{name: "renew, default ttl", target: "renew", headers: []string{jsonCT}, body: token(""), path: fastPath},
		{name: "renew, ttl as a decimal", target: "renew", headers: []string{jsonCT}, body: token(`,"ttl_seconds":3e1`), path: fastPath},
		{name: "renew, ttl 30.0", target: "renew", headers: []string{jsonCT}, body: token(`,"ttl_seconds":30.0`), path: fastPath},
		{name: "renew, negative ttl", target: "renew", headers: []string{jsonCT}, body: token(`,"ttl_seconds":-5`), path: fastPath},
		{name: "renew, negative zero ttl", target: "renew", headers: []string{jsonCT}, body: token(`,"ttl_seconds":-0`), path: fastPath},
		{name: "renew, huge ttl", target: "renew", headers: []string{jsonCT}, body: token(`,"ttl_seconds":9223372036854775807`), path: fastPath},
		{name: "renew, fractional ttl", target: "renew", headers: []string{jsonCT}, body: token(`,"ttl_seconds":2.5`), path: humaPath},
		{name: "renew, ttl out of range", target: "renew", headers: []string{jsonCT}, body: token(`,"ttl_seconds":1e400`), path: humaPath},
		{name: "renew, ttl a string", target: "renew", headers: []string{jsonCT}, body: token(`,"ttl_seconds":"30"`), path: humaPath},
		{name: "renew, ttl true", target: "renew", headers: []string{jsonCT}, body: token(`,"ttl_seconds":true`), path: humaPath},
		{name: "renew, token null", target: "renew", headers: []string{jsonCT}, body: `{"leader_token":null}`, path: fastPath},
		{name: "renew, token a number", target: "renew", headers: []string{jsonCT}, body: `{"leader_token":5}`, path: humaPath},
		{name: "renew, empty object", target: "renew", headers: []string{jsonCT}, body: `{}`, path: fastPath},
		{name: "renew, malformed token", target: "renew", headers: []string{jsonCT}, body: `{"leader_token":"x"}`, path: fastPath},
		{name: "renew, another token", target: "renew", headers: []string{jsonCT}, body: `{"leader_token":"` + strings.Repeat("A", 43) + `"}`, path: fastPath},
		{name: "renew, unknown field", target: "renew", headers: []string{jsonCT}, body: token(`,"extra":[1,{"b":null}]`), path: humaPath},
		{name: "renew, unknown field null", target: "renew", headers: []string{jsonCT}, body: token(`,"extra":null`), path: fastPath},
		{name: "renew, differently cased field", target: "renew", headers: []string{jsonCT}, body: `{"LEADER_TOKEN":"{{TOKEN}}"}`, path: humaPath},
		{name: "renew, differently cased field of the wrong type", target: "renew", headers: []string{jsonCT}, body: token(`,"TTL_SECONDS":"x"`), path: humaPath},
		{name: "renew, escaped field name", target: "renew", headers: []string{jsonCT}, body: `{"leader\u005ftoken":"{{TOKEN}}"}`, path: anyPath},
		{name: "renew, escaped token", target: "renew", headers: []string{jsonCT}, body: `{"leader_token":"\u0041{{TOKEN}}"}`, path: fastPath},
		{name: "renew, duplicate key", target: "renew", headers: []string{jsonCT}, body: token(`,"leader_token":"x"`), path: humaPath},
		{name: "renew, invalid UTF-8", target: "renew", headers: []string{jsonCT}, body: "{\"leader_token\":\"\xff\"}", path: humaPath},
		{name: "renew, unpaired surrogate", target: "renew", headers: []string{jsonCT}, body: `{"leader_token":"\ud800"}`, path: humaPath},
		{name: "renew, trailing data", target: "renew", headers: []string{jsonCT}, body: token("") + ` {}`, path: humaPath},
		{name: "renew, trailing garbage", target: "renew", headers: []string{jsonCT}, body: token("") + `x`, path: humaPath},
		{name: "renew, truncated", target: "renew", headers: []string{jsonCT}, body: `{"leader_token":"{{TOKEN}}"`, path: humaPath},
		{name: "renew, token unquoted", target: "renew", headers: []string{jsonCT}, body: `{"leader_token":` + fakeToken + `}`, path: humaPath},
		{name: "renew, an array", target: "renew", headers: []string{jsonCT}, body: `[]`, path: humaPath},
		{name: "renew, null", target: "renew", headers: []string{jsonCT}, body: `null`, path: humaPath},
		{name: "renew, a string", target: "renew", headers: []string{jsonCT}, body: `"a"`, path: humaPath},
		{name: "renew, a number", target: "renew", headers: []string{jsonCT}, body: `1`, path: humaPath},
		{name: "renew, empty body", target: "renew", headers: []string{jsonCT}, path: humaPath},
		{name: "renew, charset", target: "renew", headers: []string{"Content-Type: application/json; charset=utf-8"}, body: token(""), path: humaPath},
		{name: "renew, upper-case media type", target: "renew", headers: []string{"Content-Type: APPLICATION/JSON"}, body: token(""), path: humaPath},
		{name: "renew, text", target: "renew", headers: []string{"Content-Type: text/plain"}, body: token(""), path: humaPath},
		{name: "renew, no content type", target: "renew", body: token(""), path: humaPath},
		{name: "renew, two content types", target: "renew", headers: []string{jsonCT, "Content-Type: text/plain"}, body: token(""), path: fastPath},
		{name: "renew, accept anything", target: "renew", headers: []string{jsonCT, "Accept: */*"}, body: token(""), path: fastPath},
		{name: "renew, accept JSON", target: "renew", headers: []string{jsonCT, "Accept: application/json"}, body: token(""), path: fastPath},
		{name: "renew, accept HTML", target: "renew", headers: []string{jsonCT, "Accept: text/html"}, body: token(""), path: humaPath},
		{name: "renew, accept a list", target: "renew", headers: []string{jsonCT, "Accept: application/json, */*;q=0.5"}, body: token(""), path: humaPath},
		{name: "renew, accept CBOR", target: "renew", headers: []string{jsonCT, "Accept: application/cbor"}, body: token(""), path: humaPath},
		{name: "renew, a client's request id", target: "renew", headers: []string{jsonCT, "X-Request-Id: req_00000000000000000000000000000000"}, body: token(""), path: fastPath},
		{name: "renew, expect continue", target: "renew", headers: []string{jsonCT, "Expect: 100-continue"}, body: token(""), path: humaPath},
		{name: "renew, chunked", target: "renew", headers: []string{jsonCT, "Transfer-Encoding: chunked"}, raw: true,
			body: "5\r\n{\"lea\r\n34\r\nder_token\":\"{{TOKEN}}\"}\r\n0\r\n\r\n", path: humaPath},
		{name: "renew, connection close", target: "renew", headers: []string{jsonCT, "Connection: close"}, body: token(""), path: fastPath},
		{name: "renew, keep-alive", target: "renew", headers: []string{jsonCT, "Connection: keep-alive"}, body: token(""), path: fastPath},
		{name: "renew, body beyond the fast path's", target: "renew", headers: []string{jsonCT}, body: token(`,"pad":"` + long + `"`), path: humaPath},
		{name: "renew, body beyond the limit", target: "renew", headers: []string{jsonCT}, body: token(`,"pad":"` + strings.Repeat(long, 9) + `"`), path: humaPath},
		{name: "renew, lower-case method", method: "post", target: "renew", headers: []string{jsonCT}, body: token(""), path: humaPath},
		{name: "renew, trailing slash", target: "/elections/" + diffRoom + "/renew/", headers: []string{jsonCT}, body: token(""), path: humaPath},
		{name: "renew, escaped path", target: "/elections/diff%2Droom-0001/renew", headers: []string{jsonCT}, body: token(""), path: humaPath},
		{name: "renew, escaped slash", target: "/elections/" + diffRoom + "%2Frenew", headers: []string{jsonCT}, body: token(""), path: humaPath},
		{name: "renew, invalid room", target: "/elections/bad/renew", headers: []string{jsonCT}, body: token(""), path: humaPath},
		{name: "renew, GET", method: http.MethodGet, target: "renew", path: humaPath},
		{name: "unknown operation", target: "elect", headers: []string{jsonCT}, body: token(""), path: humaPath},
		{name: "campaign, metadata to escape", target: "/elections/diff-room-meta/campaign", headers: []string{jsonCT},
			body: `{"candidate_id":"m","metadata":"é <&> \u2028 \" \\ \u0001"}`, path: fastPath},
		{name: "status, metadata to escape", method: http.MethodGet, target: "/elections/diff-room-meta", path: fastPath},
		{name: "campaign, metadata too long", target: "/elections/diff-room-long/campaign", headers: []string{jsonCT},
			body: `{"candidate_id":"m","metadata":"` + strings.Repeat("x", 1025) + `"}`, path: fastPath},
		{name: "campaign, candidate null", target: "/elections/diff-room-null/campaign", headers: []string{jsonCT}, body: `{"candidate_id":null}`, path: fastPath},
		{name: "campaign, invalid candidate", target: "/elections/diff-room-null/campaign", headers: []string{jsonCT}, body: `{"candidate_id":"a b"}`, path: fastPath},
		{name: "campaign, invalid ttl", target: "/elections/diff-room-null/campaign", headers: []string{jsonCT}, body: `{"candidate_id":"a","ttl_seconds":4}`, path: fastPath},
		{name: "campaign, metadata a number", target: "/elections/diff-room-null/campaign", headers: []string{jsonCT}, body: `{"candidate_id":"a","metadata":1}`, path: humaPath},
		{name: "store unavailable", target: "renew", headers: []string{jsonCT}, body: token(""), path: fastPath,
			setup: storeFails(fmt.Errorf("down: %w", lease.ErrUnavailable))},
		{name: "store out of space", target: "/elections/diff-room-full/campaign", headers: []string{jsonCT}, body: `{"candidate_id":"a"}`, path: fastPath,
			setup: storeFails(fmt.Errorf("full: %w", lease.ErrStoreFull))},
		{name: "store broken", method: http.MethodGet, target: "/elections/diff-room-full", path: fastPath,
			setup: storeFails(errors.New("something unexpected"))},
		{name: "store broken, huma's way", target: "renew", headers: []string{jsonCT}, body: token(`,"x":[]`), path: humaPath},
		{name: "store back", target: "renew", headers: []string{jsonCT}, body: token(""), path: fastPath, setup: storeFails(nil)},
		{name: "resign", target: "resign", headers: []string{jsonCT}, body: token(""), path: fastPath},
		{name: "renew after resigning", target: "renew", headers: []string{jsonCT}, body: token(""), path: fastPath},
		{name: "resign again", target: "resign", headers: []string{jsonCT}, body: token(""), path: fastPath},
		{name: "resign, ttl", target: "resign", headers: []string{jsonCT}, body: token(`,"ttl_seconds":30`), path: humaPath},
		{name: "campaign after resigning", target: "campaign", headers: []string{jsonCT}, body: `{"candidate_id":"c","ttl_seconds":300}`, path: fastPath},
		{name: "campaign beyond the active rooms", target: "/elections/diff-room-cap1/campaign", headers: []string{jsonCT}, body: `{"candidate_id":"a"}`, path: fastPath},
		{name: "campaign beyond the active rooms again", target: "/elections/diff-room-cap2/campaign", headers: []string{jsonCT}, body: `{"candidate_id":"a"}`, path: fastPath},
	}
	// The seeds of FuzzElectionBodies, to each operation.
	for i, seed := range electionBodySeeds(fakeToken) {
		for _, op := range []string{"campaign", "renew"} {
			cases = append(cases, wireCase{name: fmt.Sprintf("fuzz seed %d to %s", i, op), target: op, headers: []string{jsonCT}, body: seed})
		}
	}
	return cases
}

// electionBodySeeds are the seed bodies of FuzzElectionBodies (elections_fuzz_test.go), with
// token for the room leader's token.
func electionBodySeeds(token string) []string {
	return []string{
		`{"candidate_id":"a","ttl_seconds":30,"metadata":"m"}`, `{"leader_token":"` + token + `"}`,
		`{"leader_token":"` + token + `","ttl_seconds":"x"}`, `{"leader_token":` + `"` + strings.Repeat("A", 43) + `"}`,
		`{`, `[]`, `null`, `{"ttl_seconds":1e400}`, `{"candidate_id":null,"ttl_seconds":null,"metadata":null}`,
		`{"candidate_id":"a","ttl_seconds":9223372036854775807}`, "\xff\xfe", `{"metadata":"` + strings.Repeat("é", 1025) + `"}`,
		`{"candidate_id":"a","candidate_id":"b"}`, `{"leader_token":"` + token + `","leader_token":"x"}`,
		`{"` + token + `":1,"` + token + `":2}`, "{\"candidate_id\":\"a\",\"metadata\":\"caf\xe9\"}",
		"{\"candidate_id\":\"a\xff\"}", `{"candidate_id":"a","metadata":"\ud800"}`, `{"candidate_id":"\udc00x"}`,
		`{"candidate_id":5}`, `{"metadata":{"a":[1e400]}}`, `{"candidate_id":"a"} {}`, `{"leader_token":` + token + `}`,
	}
}

// TestFastPathAnswersAsHuma: over HTTP, every request of the corpus — valid and invalid bodies,
// headers, content types, ids, store failures — gets the same bytes from the fast path as from
// huma, and the fast path serves the plainly valid ones itself.
func TestFastPathAnswersAsHuma(t *testing.T) {
	p := newFastPair(t, Options{Elections: &elections.Options{AdmissionPerMinute: -1}}, true, rooms.WithMaxActiveRooms(3))
	for _, c := range wireCorpus() {
		p.sendWire(t, c)
	}
	p.compareMetrics(t)
}

// TestFastPathAnswersAsHumaAtTheGate: refusals before the body — disabled (403), out of budget
// (429) — and CORS headers are the same on the fast path.
func TestFastPathAnswersAsHumaAtTheGate(t *testing.T) {
	campaign := wireCase{target: "campaign", headers: []string{jsonCT}, body: `{"candidate_id":"a"}`}
	named := func(c wireCase, name string, path fastness, headers ...string) wireCase {
		c.name, c.path, c.headers = name, path, append(slices.Clone(c.headers), headers...)
		return c
	}
	t.Run("disabled", func(t *testing.T) {
		p := newFastPair(t, Options{Elections: &elections.Options{Disabled: true}}, true)
		p.sendWire(t, named(campaign, "campaign", humaPath))
		p.sendWire(t, wireCase{name: "status", method: http.MethodGet, target: "/elections/" + diffRoom, path: humaPath})
		p.compareMetrics(t)
	})
	t.Run("budget", func(t *testing.T) {
		p := newFastPair(t, Options{Elections: &elections.Options{AdmissionPerMinute: 2}}, true)
		for i := range 3 {
			p.sendWire(t, named(campaign, fmt.Sprintf("campaign %d", i), fastPath))
		}
		// Reading the body would send 100 Continue before the refusal: huma refuses first.
		p.sendWire(t, named(campaign, "campaign expecting 100-continue", humaPath, "Expect: 100-continue"))
		p.sendWire(t, named(wireCase{target: "campaign", headers: []string{jsonCT}, body: `[]`}, "malformed campaign", humaPath))
		p.sendWire(t, named(wireCase{target: "renew", headers: []string{jsonCT}, body: `{"leader_token":"{{TOKEN}}"}`}, "renew", fastPath))
		p.compareMetrics(t)
	})
	t.Run("cors", func(t *testing.T) {
		p := newFastPair(t, Options{CORSAllowedOrigins: []string{"https://app.example"}, Elections: &elections.Options{AdmissionPerMinute: -1}}, true)
		p.sendWire(t, named(campaign, "no origin", fastPath))
		p.sendWire(t, named(campaign, "allowed origin", fastPath, "Origin: https://app.example"))
		p.sendWire(t, named(campaign, "other origin", fastPath, "Origin: https://other.example"))
		malformed := wireCase{target: "campaign", headers: []string{jsonCT}, body: `{"candidate_id":"a","extra":{}}`}
		p.sendWire(t, named(malformed, "allowed origin, huma's way", humaPath, "Origin: https://app.example"))
		p.sendWire(t, wireCase{name: "preflight", method: http.MethodOptions, target: "campaign", path: anyPath,
			headers: []string{"Origin: https://app.example", "Access-Control-Request-Method: POST", "Access-Control-Request-Headers: content-type"}})
		p.sendWire(t, wireCase{name: "status", method: http.MethodGet, target: "/elections/" + diffRoom, path: fastPath, headers: []string{"Origin: https://app.example"}})
		p.compareMetrics(t)
	})
}

// serveInProcess serves the request req makes on ps, in process, and returns the answer's status,
// headers and body, normalized.
func (ps *pairServer) serveInProcess(req *http.Request) string {
	w := httptest.NewRecorder()
	ps.s.Handler().ServeHTTP(w, req)
	res := w.Result()
	var b strings.Builder
	fmt.Fprintf(&b, "%d\r\n", res.StatusCode)
	_ = res.Header.Write(&b)
	b.WriteString("\r\n" + w.Body.String())
	return ps.normalize(roomOf(req.URL.Path), b.String())
}

// postInProcess is serveInProcess of a POST of body to the room's operation op.
func (ps *pairServer) postInProcess(op, contentType string, body io.Reader) string {
	req := httptest.NewRequest(http.MethodPost, "/elections/"+diffRoom+"/"+op, body)
	req.Header.Set("Content-Type", contentType)
	return ps.serveInProcess(req)
}

// FuzzFastPathAnswersAsHuma sends arbitrary bodies, with JSON's canonical or another content
// type, to campaign, renew and resign of a room that has a leader, on both servers (in process),
// and compares status, headers and body. The bodies hold no real token (see fakeToken): the
// leader stays, and renewals with its token are TestFastPathAnswersAsHuma's.
func FuzzFastPathAnswersAsHuma(f *testing.F) {
	p := newFastPair(f, Options{Elections: &elections.Options{AdmissionPerMinute: -1}}, false)
	for _, ps := range []*pairServer{p.fast, p.huma} {
		if answer := ps.postInProcess("campaign", "application/json", strings.NewReader(`{"candidate_id":"holder","ttl_seconds":300}`)); !strings.HasPrefix(answer, "200") {
			f.Fatalf("campaign: %s", answer)
		}
	}
	for _, seed := range append(electionBodySeeds(fakeToken), `{"leader_token":"`+fakeToken+`","ttl_seconds":2.5}`, `{"leader_token":"`+fakeToken+`","x":null}`) {
		for op := range 3 {
			f.Add(uint8(op), false, []byte(seed))
		}
		f.Add(uint8(1), true, []byte(seed))
	}
	f.Fuzz(func(t *testing.T, op uint8, otherType bool, body []byte) {
		name := []string{"campaign", "renew", "resign"}[op%3]
		contentType := "application/json"
		if otherType {
			contentType = "application/json; charset=utf-8"
		}
		fast := p.fast.postInProcess(name, contentType, bytes.NewReader(body))
		huma := p.huma.postInProcess(name, contentType, bytes.NewReader(body))
		if fast != huma {
			t.Fatalf("%s %q: the answers differ\nfast path: %q\nhuma:      %q", name, body, fast, huma)
		}
	})
}

// brokenBody yields its bytes, the last of them with err, and then io.EOF, as a connection's
// reader does after it reported an error once: whoever read the error has to keep it.
type brokenBody struct {
	data []byte
	err  error
}

func (b *brokenBody) Read(p []byte) (int, error) {
	n := copy(p, b.data)
	b.data = b.data[n:]
	if len(b.data) == 0 {
		err := b.err
		b.err = io.EOF
		return n, err
	}
	return n, nil
}

// timeoutError is a read deadline's error.
type timeoutError struct{}

func (timeoutError) Error() string { return "i/o timeout" }
func (timeoutError) Timeout() bool { return true }

// TestFastPathLeavesBrokenBodiesToHuma: a body whose reading fails — cut short, timed out,
// failing with its last bytes — is answered by huma, with the same error as if it had read it
// first.
func TestFastPathLeavesBrokenBodiesToHuma(t *testing.T) {
	p := newFastPair(t, Options{Elections: &elections.Options{AdmissionPerMinute: -1}}, false)
	body := `{"candidate_id":"a","ttl_seconds":30}`
	for _, c := range []struct {
		name string
		read string // of body, before the error
		err  error
	}{
		{"cut short", body[:10], io.ErrUnexpectedEOF},
		{"timed out", body[:10], timeoutError{}},
		{"nothing read", "", timeoutError{}},
		{"failing with the last bytes", body, errors.New("connection reset")},
		{"whole, then EOF", body, io.EOF},
	} {
		var answers [2]string
		routed := p.fast.routed.Load()
		for i, ps := range []*pairServer{p.fast, p.huma} {
			req := httptest.NewRequest(http.MethodPost, "/elections/"+diffRoom+"/campaign", &brokenBody{data: []byte(c.read), err: c.err})
			req.Header.Set("Content-Type", "application/json")
			req.ContentLength = int64(len(body))
			answers[i] = ps.serveInProcess(req)
		}
		if answers[0] != answers[1] {
			t.Errorf("%s: the answers differ\nfast path: %q\nhuma:      %q", c.name, answers[0], answers[1])
		}
		if viaRouter, broken := p.fast.routed.Load() > routed, c.err != io.EOF; viaRouter != broken {
			t.Errorf("%s: served by the router: %v, want %v", c.name, viaRouter, broken)
		}
	}
}

// rewindBody is a request body that can be read again.
type rewindBody struct{ bytes.Reader }

func (*rewindBody) Close() error { return nil }

// headerWriter is a ResponseWriter that keeps the headers (cleared, not remade, between
// requests) and discards the body.
type headerWriter struct {
	h      http.Header
	status int
}

func (w *headerWriter) Header() http.Header         { return w.h }
func (w *headerWriter) WriteHeader(status int)      { w.status = status }
func (w *headerWriter) Write(b []byte) (int, error) { return len(b), nil }
