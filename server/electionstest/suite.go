package electionstest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

var (
	requestIDPattern = regexp.MustCompile(`^req_[0-9a-f]{32}$`)
	roomIDPattern    = regexp.MustCompile(`^[A-Za-z0-9_-]{32}$`)
	tokenPattern     = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)
	timePattern      = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`)
)

// Run runs the conformance suite against servers on the store newStore returns.
func Run(t *testing.T, newStore NewStore) {
	t.Run("CreateRoom", func(t *testing.T) { testCreate(t, newStore) })
	t.Run("ElectionLifecycle", func(t *testing.T) { testLifecycle(t, newStore) })
	t.Run("AnyReplicaServesAnyRequest", func(t *testing.T) { testReplicas(t, newStore) })
	t.Run("RenewTTL", func(t *testing.T) { testRenewTTL(t, newStore) })
	t.Run("TokenErrors", func(t *testing.T) { testTokenErrors(t, newStore) })
	t.Run("InputValidation", func(t *testing.T) { testValidation(t, newStore) })
	t.Run("RoomIDs", func(t *testing.T) { testRoomIDs(t, newStore) })
	t.Run("Disabled", func(t *testing.T) { testDisabled(t, newStore) })
	t.Run("Capacity", func(t *testing.T) { testCapacity(t, newStore) })
	t.Run("Admission", func(t *testing.T) { testAdmission(t, newStore) })
	t.Run("ForwardedFor", func(t *testing.T) { testForwardedFor(t, newStore) })
	t.Run("Watch", func(t *testing.T) { testWatch(t, newStore) })
	t.Run("WatchLimits", func(t *testing.T) { testWatchLimits(t, newStore) })
	t.Run("Expiry", func(t *testing.T) { testExpiry(t, newStore) })
}

// checkError checks the error shape: status, code, a request id equal to the header's, and
// retry_after_ms equal to Retry-After × 1000 exactly where the contract puts it.
func checkError(t *testing.T, r reply, status int, code string) {
	t.Helper()
	if r.status != status || r.str("code") != code {
		t.Fatalf("want %d %s, got %d: %s", status, code, r.status, r.raw)
	}
	if id := r.str("request_id"); !requestIDPattern.MatchString(id) || id != r.header.Get("X-Request-Id") {
		t.Fatalf("request_id %q, X-Request-Id %q", id, r.header.Get("X-Request-Id"))
	}
	if r.str("error") == "" || !r.has("details") {
		t.Fatalf("error body lacks error or details: %s", r.raw)
	}
	retry := status == http.StatusTooManyRequests || code == "capacity_exceeded"
	if !retry {
		if r.has("retry_after_ms") {
			t.Fatalf("retry_after_ms on a %d %s: %s", status, code, r.raw)
		}
		return
	}
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || secs < 1 {
		t.Fatalf("Retry-After %q on %d", r.header.Get("Retry-After"), status)
	}
	if r.num("retry_after_ms") != int64(secs)*1000 {
		t.Fatalf("retry_after_ms %d, Retry-After %d s", r.num("retry_after_ms"), secs)
	}
}

func campaign(c *cluster, i int, room, candidate string, ttl int) reply {
	c.t.Helper()
	return c.call(i, http.MethodPost, "/elections/"+room+"/campaign", map[string]any{"candidate_id": candidate, "ttl_seconds": ttl})
}

func mustLead(t *testing.T, c *cluster, i int, room, candidate string, ttl int) (token string, term int64) {
	t.Helper()
	r := campaign(c, i, room, candidate, ttl)
	if r.status != http.StatusOK || r.str("status") != "leader" {
		t.Fatalf("campaign of %s: want leader, got %d %s", candidate, r.status, r.raw)
	}
	l := r.leader(t)
	var got struct {
		CandidateID string `json:"candidate_id"`
		Term        int64  `json:"term"`
		ExpiresAt   string `json:"expires_at"`
	}
	raw, _ := json.Marshal(l)
	_ = json.Unmarshal(raw, &got)
	if got.CandidateID != candidate || got.Term <= 0 || !timePattern.MatchString(got.ExpiresAt) {
		t.Fatalf("leader object %s", r.fields["leader"])
	}
	if !tokenPattern.MatchString(r.str("leader_token")) || r.num("renew_after_ms") != int64(ttl)*500 || r.str("election_id") != room {
		t.Fatalf("leader answer %s", r.raw)
	}
	if r.has("retry_after_ms") {
		t.Fatalf("a leader answer carries retry_after_ms: %s", r.raw)
	}
	return r.str("leader_token"), got.Term
}

func termOf(t *testing.T, r reply) int64 {
	t.Helper()
	var term int64
	if err := json.Unmarshal(r.leader(t)["term"], &term); err != nil {
		t.Fatal(err)
	}
	return term
}

func testCreate(t *testing.T, newStore NewStore) {
	c := start(t, newStore, 1, Limits{})
	seen := map[string]bool{}
	for range 3 {
		r := c.call(0, http.MethodPost, "/elections", nil)
		id := r.str("election_id")
		if r.status != http.StatusCreated || !roomIDPattern.MatchString(id) || seen[id] {
			t.Fatalf("create: %d %s", r.status, r.raw)
		}
		seen[id] = true
		if r.str("campaign_path") != "/elections/"+id+"/campaign" || r.str("status_path") != "/elections/"+id ||
			r.str("watch_path") != "/elections/"+id+"/watch" {
			t.Fatalf("paths: %s", r.raw)
		}
		if !requestIDPattern.MatchString(r.header.Get("X-Request-Id")) {
			t.Fatalf("X-Request-Id %q", r.header.Get("X-Request-Id"))
		}
		// Creating stores nothing: the room reads vacant.
		st := c.call(0, http.MethodGet, "/elections/"+id, nil)
		if st.status != http.StatusOK || st.str("status") != "vacant" || st.has("leader") || st.num("retry_after_ms") != 0 {
			t.Fatalf("status of a new room: %d %s", st.status, st.raw)
		}
	}
}

// testLifecycle is the seed's main scenario: campaign → a second candidate is follower →
// renew keeps the term → resign → re-election gets a higher term.
func testLifecycle(t *testing.T, newStore NewStore) {
	c := start(t, newStore, 1, Limits{})
	room := rooms.NewRoomID()
	r := c.call(0, http.MethodPost, "/elections/"+room+"/campaign", map[string]any{"candidate_id": "worker-a", "ttl_seconds": 30})
	if r.status != http.StatusOK || r.str("status") != "leader" {
		t.Fatalf("first campaign: %d %s", r.status, r.raw)
	}
	token, term := r.str("leader_token"), termOf(t, r)
	if _, ok := r.leader(t)["metadata"]; ok {
		t.Fatalf("metadata present although none was given: %s", r.raw)
	}
	if r.num("renew_after_ms") != 15000 {
		t.Fatalf("renew_after_ms: %s", r.raw)
	}

	f := campaign(c, 0, room, "worker-b", 30)
	if f.status != http.StatusOK || f.str("status") != "follower" || f.has("leader_token") || f.has("renew_after_ms") {
		t.Fatalf("second candidate: %d %s", f.status, f.raw)
	}
	if termOf(t, f) != term || f.leader(t)["candidate_id"] == nil || string(f.leader(t)["candidate_id"]) != `"worker-a"` {
		t.Fatalf("follower sees another leader: %s", f.raw)
	}
	if ra := f.num("retry_after_ms"); ra <= 25000 || ra > 30000 {
		t.Fatalf("follower retry_after_ms %d, want about 30 s", ra)
	}
	// The live leader campaigning again is answered as a follower, without a new token.
	again := campaign(c, 0, room, "worker-a", 30)
	if again.str("status") != "follower" || again.has("leader_token") || termOf(t, again) != term {
		t.Fatalf("leader campaigning again: %s", again.raw)
	}

	st := c.call(0, http.MethodGet, "/elections/"+room, nil)
	if st.status != http.StatusOK || st.str("status") != "leader" || termOf(t, st) != term || st.num("retry_after_ms") <= 0 {
		t.Fatalf("status: %d %s", st.status, st.raw)
	}
	if strings.Contains(string(st.raw), token) || st.has("leader_token") {
		t.Fatalf("status leaks the token: %s", st.raw)
	}

	rn := c.call(0, http.MethodPost, "/elections/"+room+"/renew", map[string]any{"leader_token": token, "ttl_seconds": 30})
	if rn.status != http.StatusOK || rn.str("status") != "leader" || rn.str("leader_token") != token || termOf(t, rn) != term {
		t.Fatalf("renew: %d %s", rn.status, rn.raw)
	}

	rs := c.call(0, http.MethodPost, "/elections/"+room+"/resign", map[string]any{"leader_token": token})
	if rs.status != http.StatusOK || rs.str("status") != "vacant" || rs.num("previous_term") != term || rs.str("election_id") != room {
		t.Fatalf("resign: %d %s", rs.status, rs.raw)
	}
	if st := c.call(0, http.MethodGet, "/elections/"+room, nil); st.str("status") != "vacant" || st.has("leader") {
		t.Fatalf("status after resign: %s", st.raw)
	}
	_, term2 := mustLead(t, c, 0, room, "worker-b", 30)
	if term2 <= term {
		t.Fatalf("re-election term %d, not above %d", term2, term)
	}

	// A 1024-character metadata (multi-byte characters count once) is accepted and shown.
	room2 := rooms.NewRoomID()
	meta := strings.Repeat("é", 1024)
	m := c.call(0, http.MethodPost, "/elections/"+room2+"/campaign", map[string]any{"candidate_id": "agent.a:1@x", "metadata": meta})
	if m.status != http.StatusOK || m.str("status") != "leader" || m.num("renew_after_ms") != 15000 {
		t.Fatalf("campaign with 1024-character metadata and the default ttl: %d %s", m.status, m.raw)
	}
	var got string
	_ = json.Unmarshal(m.leader(t)["metadata"], &got)
	if got != meta {
		t.Fatalf("metadata not echoed")
	}
	if strings.Contains(c.logs.String(), token) || strings.Contains(c.logs.String(), m.str("leader_token")) {
		t.Fatalf("a leader token reached the server log")
	}
}

// testReplicas: every server on the store serves every room; state written through one is
// seen and accepted by the other.
func testReplicas(t *testing.T, newStore NewStore) {
	c := start(t, newStore, 2, Limits{})
	room := rooms.NewRoomID()
	token, term := mustLead(t, c, 0, room, "a", 30)
	if f := campaign(c, 1, room, "b", 30); f.str("status") != "follower" || termOf(t, f) != term {
		t.Fatalf("second replica: %s", f.raw)
	}
	if rn := c.call(1, http.MethodPost, "/elections/"+room+"/renew", map[string]any{"leader_token": token}); rn.status != http.StatusOK || termOf(t, rn) != term {
		t.Fatalf("renew through the second replica: %d %s", rn.status, rn.raw)
	}
	if rs := c.call(1, http.MethodPost, "/elections/"+room+"/resign", map[string]any{"leader_token": token}); rs.status != http.StatusOK {
		t.Fatalf("resign through the second replica: %d %s", rs.status, rs.raw)
	}
	if _, term2 := mustLead(t, c, 0, room, "b", 30); term2 <= term {
		t.Fatalf("term %d after %d", term2, term)
	}
}

func testRenewTTL(t *testing.T, newStore NewStore) {
	c := start(t, newStore, 1, Limits{})
	room := rooms.NewRoomID()
	token, _ := mustLead(t, c, 0, room, "a", 300)
	expires := func(r reply) time.Time {
		t.Helper()
		var s string
		_ = json.Unmarshal(r.leader(t)["expires_at"], &s)
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	// A renewal may shorten the lease; without ttl_seconds it is 30 s, not the original 300.
	short := c.call(0, http.MethodPost, "/elections/"+room+"/renew", map[string]any{"leader_token": token, "ttl_seconds": 5})
	if short.status != http.StatusOK || short.num("renew_after_ms") != 2500 {
		t.Fatalf("renew with ttl 5: %d %s", short.status, short.raw)
	}
	if left := time.Until(expires(short)); left > 5*time.Second || left < 3*time.Second {
		t.Fatalf("after a 5 s renewal the lease has %v left", left)
	}
	def := c.call(0, http.MethodPost, "/elections/"+room+"/renew", map[string]any{"leader_token": token})
	if def.status != http.StatusOK || def.num("renew_after_ms") != 15000 {
		t.Fatalf("renew without ttl: %d %s", def.status, def.raw)
	}
	if left := time.Until(expires(def)); left > 30*time.Second || left < 28*time.Second {
		t.Fatalf("after a default renewal the lease has %v left", left)
	}
	bad := c.call(0, http.MethodPost, "/elections/"+room+"/renew", map[string]any{"leader_token": token, "ttl_seconds": 301})
	checkError(t, bad, http.StatusBadRequest, "invalid_ttl")
}

// testTokenErrors: malformed tokens, stale tokens and tokens of an older term.
func testTokenErrors(t *testing.T, newStore NewStore) {
	c := start(t, newStore, 1, Limits{})
	room := rooms.NewRoomID()
	for _, op := range []string{"renew", "resign"} {
		// Vacant room, well-formed token: 404 lease_not_current.
		r := c.call(0, http.MethodPost, "/elections/"+room+"/"+op, map[string]any{"leader_token": strings.Repeat("A", 43)})
		checkError(t, r, http.StatusNotFound, "lease_not_current")
		for _, tok := range []any{"not-a-token", "", strings.Repeat("A", 44), strings.Repeat("A", 42) + "B"} {
			r := c.call(0, http.MethodPost, "/elections/"+room+"/"+op, map[string]any{"leader_token": tok})
			checkError(t, r, http.StatusBadRequest, "invalid_input")
		}
		r = c.call(0, http.MethodPost, "/elections/"+room+"/"+op, map[string]any{})
		checkError(t, r, http.StatusBadRequest, "invalid_input")
	}
	old, _ := mustLead(t, c, 0, room, "a", 30)
	if r := c.call(0, http.MethodPost, "/elections/"+room+"/resign", map[string]any{"leader_token": old}); r.status != http.StatusOK {
		t.Fatalf("resign: %s", r.raw)
	}
	// Stale token after resign: 404 lease_not_current with a request id.
	r := c.call(0, http.MethodPost, "/elections/"+room+"/renew", map[string]any{"leader_token": old})
	checkError(t, r, http.StatusNotFound, "lease_not_current")
	// Another term holds the room: 400 lease_not_current.
	mustLead(t, c, 0, room, "b", 30)
	for _, op := range []string{"renew", "resign"} {
		r := c.call(0, http.MethodPost, "/elections/"+room+"/"+op, map[string]any{"leader_token": old})
		checkError(t, r, http.StatusBadRequest, "lease_not_current")
		if strings.Contains(string(r.raw), old) {
			t.Fatalf("the error echoes the token: %s", r.raw)
		}
	}
	// A malformed body that carries a token does not echo it.
	r = c.call(0, http.MethodPost, "/elections/"+room+"/renew", []byte(`{"leader_token":"`+old+`",`))
	checkError(t, r, http.StatusBadRequest, "invalid_input")
	r = c.call(0, http.MethodPost, "/elections/"+room+"/renew", []byte(`{"leader_token":"`+old+`","ttl_seconds":"30"}`))
	checkError(t, r, http.StatusUnprocessableEntity, "invalid_input")
	if strings.Contains(string(r.raw), old) {
		t.Fatalf("the validation error echoes the token: %s", r.raw)
	}
	if strings.Contains(c.logs.String(), old) {
		t.Fatalf("a leader token reached the server log")
	}
}

func testValidation(t *testing.T, newStore NewStore) {
	c := start(t, newStore, 1, Limits{})
	room := rooms.NewRoomID()
	path := "/elections/" + room + "/campaign"
	cases := []struct {
		name   string
		body   any
		header []string
		status int
		code   string
	}{
		{"candidate with a slash", map[string]any{"candidate_id": "agent/a"}, nil, 400, "invalid_input"},
		{"missing candidate", map[string]any{"ttl_seconds": 30}, nil, 400, "invalid_input"},
		{"empty candidate", map[string]any{"candidate_id": ""}, nil, 400, "invalid_input"},
		{"65-byte candidate", map[string]any{"candidate_id": strings.Repeat("a", 65)}, nil, 400, "invalid_input"},
		{"1025-character metadata", map[string]any{"candidate_id": "a", "metadata": strings.Repeat("x", 1025)}, nil, 400, "invalid_input"},
		{"ttl 4", map[string]any{"candidate_id": "a", "ttl_seconds": 4}, nil, 400, "invalid_ttl"},
		{"ttl 301", map[string]any{"candidate_id": "a", "ttl_seconds": 301}, nil, 400, "invalid_ttl"},
		{"ttl 0", map[string]any{"candidate_id": "a", "ttl_seconds": 0}, nil, 400, "invalid_ttl"},
		{"negative ttl", map[string]any{"candidate_id": "a", "ttl_seconds": -30}, nil, 400, "invalid_ttl"},
		{"candidate before metadata before ttl", map[string]any{"candidate_id": "a/b", "metadata": strings.Repeat("x", 2000), "ttl_seconds": 1}, nil, 400, "invalid_input"},
		{"metadata before ttl", map[string]any{"candidate_id": "a", "metadata": strings.Repeat("x", 2000), "ttl_seconds": 1}, nil, 400, "invalid_input"},
		{"ttl as a string", map[string]any{"candidate_id": "a", "ttl_seconds": "30"}, nil, 422, "invalid_input"},
		{"candidate as a number", map[string]any{"candidate_id": 7}, nil, 422, "invalid_input"},
		{"fractional ttl", []byte(`{"candidate_id":"a","ttl_seconds":30.5}`), nil, 422, "invalid_input"},
		{"malformed JSON", []byte(`{"candidate_id":`), nil, 400, "invalid_input"},
		{"not an object", []byte(`[1,2]`), nil, 422, "invalid_input"},
		{"empty body", []byte(``), nil, 400, "invalid_input"},
		{"text/plain", map[string]any{"candidate_id": "a"}, []string{"Content-Type", "text/plain"}, 415, "invalid_input"},
		{"no content type", map[string]any{"candidate_id": "a"}, []string{"Content-Type", ""}, 415, "invalid_input"},
		{"huge ttl", []byte(`{"candidate_id":"a","ttl_seconds":99999999999999999999}`), nil, 400, "invalid_ttl"},
		{"field names are exact", map[string]any{"CANDIDATE_ID": "a", "TTL_Seconds": 7}, nil, 400, "invalid_input"},
		{"body over the limit", map[string]any{"candidate_id": "a", "pad": strings.Repeat("x", 70_000)}, nil, 413, "invalid_input"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.call(0, http.MethodPost, path, tc.body, tc.header...)
			checkError(t, r, tc.status, tc.code)
		})
	}
	// Nothing above campaigned: the room is still vacant.
	if st := c.call(0, http.MethodGet, "/elections/"+room, nil); st.str("status") != "vacant" {
		t.Fatalf("a rejected campaign changed the room: %s", st.raw)
	}
	// Unknown fields are ignored; a charset parameter is fine.
	r := c.call(0, http.MethodPost, path, map[string]any{"candidate_id": "a", "ttl_seconds": 30, "color": "blue", "extra": map[string]any{"x": 1}},
		"Content-Type", "application/json; charset=utf-8")
	if r.status != http.StatusOK || r.str("status") != "leader" {
		t.Fatalf("campaign with unknown fields: %d %s", r.status, r.raw)
	}
	// A whole number written as a decimal is that number; a differently-cased name is an
	// unknown field, ignored (it does not override the real one).
	room2 := rooms.NewRoomID()
	r = c.call(0, http.MethodPost, "/elections/"+room2+"/campaign", []byte(`{"candidate_id":"a","Candidate_ID":"x y","ttl_seconds":2e1}`))
	if r.status != http.StatusOK || r.num("renew_after_ms") != 10000 {
		t.Fatalf("campaign with ttl 2e1 and a differently-cased field: %d %s", r.status, r.raw)
	}
	// The check order puts the room id first.
	bad := c.call(0, http.MethodPost, "/elections/short/campaign", map[string]any{"candidate_id": "a/b", "ttl_seconds": 1})
	checkError(t, bad, http.StatusBadRequest, "invalid_input")
	if !strings.Contains(bad.str("details"), "election id") {
		t.Fatalf("an invalid room id is not reported first: %s", bad.raw)
	}
}

func testRoomIDs(t *testing.T, newStore NewStore) {
	c := start(t, newStore, 1, Limits{})
	for _, id := range []string{"short12", strings.Repeat("a", 65), "abc%24defgh", "abc.defgh", "abc~defgh"} {
		for _, req := range []struct{ method, path string }{
			{http.MethodGet, ""}, {http.MethodPost, "/campaign"}, {http.MethodPost, "/renew"}, {http.MethodPost, "/resign"}, {http.MethodGet, "/watch"},
		} {
			var body any
			if req.method == http.MethodPost {
				body = map[string]any{"candidate_id": "a", "leader_token": strings.Repeat("A", 43)}
			}
			r := c.call(0, req.method, "/elections/"+id+req.path, body)
			checkError(t, r, http.StatusBadRequest, "invalid_input")
		}
	}
	// Custom ids of 8 and 64 characters are valid rooms nobody created.
	for _, id := range []string{"room-0_1", strings.Repeat("Z", 64)} {
		mustLead(t, c, 0, id, "a", 30)
	}
}

func testDisabled(t *testing.T, newStore NewStore) {
	c := start(t, newStore, 1, Limits{Disabled: true, AdmissionPerMinute: 1})
	room := rooms.NewRoomID()
	for range 3 { // also past the admission budget: 403 comes first
		for _, req := range []struct {
			method, path string
			body         any
		}{
			{http.MethodPost, "/elections", nil},
			{http.MethodGet, "/elections/" + room, nil},
			{http.MethodGet, "/elections/bad", nil},
			{http.MethodPost, "/elections/" + room + "/campaign", []byte(`{`)},
			{http.MethodPost, "/elections/" + room + "/renew", map[string]any{"leader_token": "x"}},
			{http.MethodPost, "/elections/" + room + "/resign", map[string]any{}},
			{http.MethodGet, "/elections/" + room + "/watch", nil},
		} {
			checkError(t, c.call(0, req.method, req.path, req.body), http.StatusForbidden, "forbidden")
		}
	}
}

// testCapacity: capacity 1 with two rooms racing gives exactly one 200 and one 409.
func testCapacity(t *testing.T, newStore NewStore) {
	c := start(t, newStore, 1, Limits{MaxActiveRooms: 1})
	a, b := rooms.NewRoomID(), rooms.NewRoomID()
	var wg sync.WaitGroup
	replies := make([]reply, 2)
	for i, room := range []string{a, b} {
		wg.Go(func() { replies[i] = campaign(c, 0, room, "x", 30) })
	}
	wg.Wait()
	won, refused := 0, 0
	for _, r := range replies {
		switch r.status {
		case http.StatusOK:
			won++
		case http.StatusConflict:
			refused++
			checkError(t, r, http.StatusConflict, "capacity_exceeded")
		default:
			t.Fatalf("race: %d %s", r.status, r.raw)
		}
	}
	if won != 1 || refused != 1 {
		t.Fatalf("capacity 1, two rooms: %d won, %d refused", won, refused)
	}
	// The active room itself is not refused: its campaigns are answered.
	for _, room := range []string{a, b} {
		if r := campaign(c, 0, room, "y", 30); r.status == http.StatusOK && r.str("status") == "follower" {
			return
		}
	}
	t.Fatal("the active room's campaigns are refused")
}

func testAdmission(t *testing.T, newStore NewStore) {
	const budget = 5
	c := start(t, newStore, 1, Limits{AdmissionPerMinute: budget})
	room := rooms.NewRoomID()
	token, _ := mustLead(t, c, 0, room, "a", 30) // 1
	for range budget - 2 {                       // 2..4
		if r := c.call(0, http.MethodPost, "/elections", nil); r.status != http.StatusCreated {
			t.Fatalf("create within the budget: %d %s", r.status, r.raw)
		}
	}
	if r := campaign(c, 0, room, "b", 30); r.status != http.StatusOK { // 5
		t.Fatalf("campaign within the budget: %d %s", r.status, r.raw)
	}
	for _, r := range []reply{
		c.call(0, http.MethodPost, "/elections", nil),
		campaign(c, 0, room, "b", 30),
		// Rate comes before validation.
		c.call(0, http.MethodPost, "/elections/"+room+"/campaign", map[string]any{"candidate_id": "a/b"}),
	} {
		checkError(t, r, http.StatusTooManyRequests, "rate_limited")
	}
	// Status, renew and resign are exempt: pressure never strands the current leader.
	for range 3 * budget {
		if r := c.call(0, http.MethodGet, "/elections/"+room, nil); r.status != http.StatusOK {
			t.Fatalf("status under rate pressure: %d %s", r.status, r.raw)
		}
		if r := c.call(0, http.MethodPost, "/elections/"+room+"/renew", map[string]any{"leader_token": token}); r.status != http.StatusOK {
			t.Fatalf("renew under rate pressure: %d %s", r.status, r.raw)
		}
	}
	if r := c.call(0, http.MethodPost, "/elections/"+room+"/resign", map[string]any{"leader_token": token}); r.status != http.StatusOK {
		t.Fatalf("resign under rate pressure: %d %s", r.status, r.raw)
	}
}

// testForwardedFor: X-Forwarded-For from a direct (untrusted) client is ignored; from a trusted
// proxy it names the client.
func testForwardedFor(t *testing.T, newStore NewStore) {
	direct := start(t, newStore, 1, Limits{AdmissionPerMinute: 2})
	for i := range 2 {
		if r := direct.call(0, http.MethodPost, "/elections", nil, "X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i)); r.status != http.StatusCreated {
			t.Fatalf("create %d: %d", i, r.status)
		}
	}
	r := direct.call(0, http.MethodPost, "/elections", nil, "X-Forwarded-For", "203.0.113.99")
	checkError(t, r, http.StatusTooManyRequests, "rate_limited")

	proxied := start(t, newStore, 1, Limits{AdmissionPerMinute: 2, TrustedProxies: "127.0.0.1/32, ::1"})
	for i := range 2 {
		if r := proxied.call(0, http.MethodPost, "/elections", nil, "X-Forwarded-For", "203.0.113.1"); r.status != http.StatusCreated {
			t.Fatalf("proxied create %d: %d", i, r.status)
		}
	}
	checkError(t, proxied.call(0, http.MethodPost, "/elections", nil, "X-Forwarded-For", "203.0.113.1"), http.StatusTooManyRequests, "rate_limited")
	// Another client behind the same proxy has its own budget; a spoofed leftmost hop does not
	// move a client to another budget (the rightmost untrusted hop is the client).
	if r := proxied.call(0, http.MethodPost, "/elections", nil, "X-Forwarded-For", "203.0.113.2"); r.status != http.StatusCreated {
		t.Fatalf("second client behind the proxy: %d %s", r.status, r.raw)
	}
	checkError(t, proxied.call(0, http.MethodPost, "/elections", nil, "X-Forwarded-For", "198.51.100.7, 203.0.113.1"), http.StatusTooManyRequests, "rate_limited")
}

// sseStream reads the frames of a watch stream.
type sseStream struct {
	t      *testing.T
	res    *http.Response
	frames chan frame

	mu  sync.Mutex
	raw []string // every frame read, as sent
}

// seen returns every frame read so far, as sent.
func (s *sseStream) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.raw...)
}

type frame struct {
	event, retry string
	data         map[string]json.RawMessage
	raw          string
}

func watch(t *testing.T, c *cluster, room string, header ...string) (*sseStream, reply) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.urls[0]+"/elections/"+room+"/watch", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Last-Event-ID", "12345") // ignored
	for j := 0; j+1 < len(header); j += 2 {
		req.Header.Set(header[j], header[j+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		defer res.Body.Close()
		var r reply
		r.status, r.header = res.StatusCode, res.Header
		_ = json.NewDecoder(res.Body).Decode(&r.fields)
		r.raw, _ = json.Marshal(r.fields)
		return nil, r
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("watch Content-Type %q", ct)
	}
	s := &sseStream{t: t, res: res, frames: make(chan frame, 64)}
	t.Cleanup(func() { res.Body.Close() })
	go func() {
		defer close(s.frames)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 64<<10), 64<<10)
		var f frame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if f.raw != "" && f.event != "" {
					s.mu.Lock()
					s.raw = append(s.raw, f.raw)
					s.mu.Unlock()
					s.frames <- f
				}
				f = frame{}
			case strings.HasPrefix(line, ":"):
			case strings.HasPrefix(line, "id:"):
				f.raw += line + "\n"
				f.event = "id-not-allowed"
			default:
				f.raw += line + "\n"
				k, v, _ := strings.Cut(line, ":")
				v = strings.TrimPrefix(v, " ")
				switch k {
				case "event":
					f.event = v
				case "retry":
					f.retry = v
				case "data":
					_ = json.Unmarshal([]byte(v), &f.data)
				}
			}
		}
	}()
	return s, reply{status: res.StatusCode}
}

// next returns the next frame; ok is false when the stream ended.
func (s *sseStream) next(within time.Duration) (frame, bool) {
	s.t.Helper()
	select {
	case f, ok := <-s.frames:
		if ok {
			if f.event != "state" || f.retry != "1000" || string(f.data["schema_version"]) != "1" || !f.hasAll() {
				s.t.Fatalf("frame not in the contract's shape: %q", f.raw)
			}
		}
		return f, ok
	case <-time.After(within):
		s.t.Fatalf("no frame within %v", within)
		return frame{}, false
	}
}

func (f frame) hasAll() bool {
	for _, k := range []string{"election_id", "status", "leader", "retry_after_ms", "observed_at"} {
		if _, ok := f.data[k]; !ok {
			return false
		}
	}
	return timePattern.MatchString(strings.Trim(string(f.data["observed_at"]), `"`))
}

func (f frame) status() string { return strings.Trim(string(f.data["status"]), `"`) }

// until reads frames until one has status want (duplicates are allowed by the contract).
func (s *sseStream) until(want string, within time.Duration) frame {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		f, ok := s.next(time.Until(deadline))
		if !ok {
			s.t.Fatalf("stream ended while waiting for %s", want)
		}
		if f.status() == want {
			return f
		}
	}
}

func testWatch(t *testing.T, newStore NewStore) {
	c := start(t, newStore, 1, Limits{})
	room := rooms.NewRoomID()
	s, r := watch(t, c, room)
	if s == nil {
		t.Fatalf("watch: %d %s", r.status, r.raw)
	}
	first, _ := s.next(10 * time.Second)
	if first.status() != "vacant" || string(first.data["leader"]) != "null" || string(first.data["retry_after_ms"]) != "0" {
		t.Fatalf("first frame of a new room: %q", first.raw)
	}
	token, term := mustLead(t, c, 0, room, "a", 30)
	f := s.until("leader", 10*time.Second)
	var l struct {
		CandidateID string `json:"candidate_id"`
		Term        int64  `json:"term"`
	}
	_ = json.Unmarshal(f.data["leader"], &l)
	if l.CandidateID != "a" || l.Term != term {
		t.Fatalf("leader frame: %q", f.raw)
	}
	if r := c.call(0, http.MethodPost, "/elections/"+room+"/resign", map[string]any{"leader_token": token}); r.status != http.StatusOK {
		t.Fatal(r.status)
	}
	s.until("vacant", 10*time.Second)

	// A new watcher of a led room starts from the current leader.
	token2, _ := mustLead(t, c, 0, room, "b", 30)
	s2, _ := watch(t, c, room)
	if f, _ := s2.next(10 * time.Second); f.status() != "leader" {
		t.Fatalf("snapshot of a led room: %q", f.raw)
	}
	// No frame carries a token.
	for _, st := range []*sseStream{s, s2} {
		for _, raw := range st.seen() {
			if strings.Contains(raw, token) || strings.Contains(raw, token2) || strings.Contains(raw, "leader_token") {
				t.Fatalf("a watch frame leaks the token: %s", raw)
			}
		}
	}
}

func testWatchLimits(t *testing.T, newStore NewStore) {
	c := start(t, newStore, 1, Limits{MaxWatchesPerClient: 2, MaxWatches: 3, WatchLifetime: 1500 * time.Millisecond})
	room := rooms.NewRoomID()
	var streams []*sseStream
	for range 2 {
		s, r := watch(t, c, room)
		if s == nil {
			t.Fatalf("watch within the limit: %d %s", r.status, r.raw)
		}
		streams = append(streams, s)
	}
	_, r := watch(t, c, room)
	checkError(t, r, http.StatusTooManyRequests, "rate_limited")
	// The lifetime ends every stream; the client reconnects.
	for _, s := range streams {
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, ok := s.next(time.Until(deadline)); !ok {
				break
			}
		}
	}
	// After the streams ended, the client may watch again.
	waitFor(t, 5*time.Second, func() bool {
		s, _ := watch(t, c, room)
		if s != nil {
			s.res.Body.Close()
		}
		return s != nil
	})

	// The global limit: a trusted proxy lets one test act as several clients.
	g := start(t, newStore, 1, Limits{MaxWatchesPerClient: 10, MaxWatches: 2, TrustedProxies: "127.0.0.1/32, ::1"})
	for i := range 2 {
		if s, r := watch(t, g, room, "X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i)); s == nil {
			t.Fatalf("watch %d: %d %s", i, r.status, r.raw)
		}
	}
	_, r = watch(t, g, room, "X-Forwarded-For", "203.0.113.50")
	checkError(t, r, http.StatusTooManyRequests, "rate_limited")
}

// testExpiry: a lease that is not renewed expires; status and watchers report the room vacant
// without any write; renewing then gives 404 and a new campaign gets a higher term.
func testExpiry(t *testing.T, newStore NewStore) {
	c := start(t, newStore, 1, Limits{})
	room := rooms.NewRoomID()
	token, term := mustLead(t, c, 0, room, "a", 5)
	s, r := watch(t, c, room)
	if s == nil {
		t.Fatalf("watch: %d %s", r.status, r.raw)
	}
	if f, _ := s.next(10 * time.Second); f.status() != "leader" {
		t.Fatalf("first frame: %q", f.raw)
	}
	start := time.Now()
	s.until("vacant", 15*time.Second)
	if took := time.Since(start); took > 7*time.Second {
		t.Fatalf("the watcher saw the expiry after %v (TTL 5 s)", took)
	}
	if st := c.call(0, http.MethodGet, "/elections/"+room, nil); st.str("status") != "vacant" {
		t.Fatalf("status after expiry: %s", st.raw)
	}
	checkError(t, c.call(0, http.MethodPost, "/elections/"+room+"/renew", map[string]any{"leader_token": token}), http.StatusNotFound, "lease_not_current")
	if _, term2 := mustLead(t, c, 0, room, "b", 30); term2 <= term {
		t.Fatalf("term %d after expiry of %d", term2, term)
	}
}

func waitFor(t *testing.T, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
