package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server"
	"github.com/regbo/lfp-swarm-lease/server/elections"
)

// FuzzElectionBodies sends arbitrary bodies to campaign, renew and resign of a room that has a
// leader. Whatever the body, the server answers with a status of the contract (never a 5xx),
// in the one error shape when it refuses, and never echoes a token-shaped string of the body
// in an error.
func FuzzElectionBodies(f *testing.F) {
	m, err := rooms.New(rooms.NewMemoryStore(), "fuzz", rooms.WithMaxClockSkew(0))
	if err != nil {
		f.Fatal(err)
	}
	s, err := server.New(server.Options{Elections: &elections.Options{Rooms: m, AdmissionPerMinute: -1}})
	if err != nil {
		f.Fatal(err)
	}
	h := s.Handler()
	const room = "fuzz-room-0001"
	do := func(path string, body []byte) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	var won struct {
		Token string `json:"leader_token"`
	}
	w := do("/elections/"+room+"/campaign", []byte(`{"candidate_id":"holder","ttl_seconds":300}`))
	if err := json.Unmarshal(w.Body.Bytes(), &won); err != nil || won.Token == "" {
		f.Fatalf("campaign: %d %s", w.Code, w.Body)
	}
	for _, seed := range []string{
		`{"candidate_id":"a","ttl_seconds":30,"metadata":"m"}`, `{"leader_token":"` + won.Token + `"}`,
		`{"leader_token":"` + won.Token + `","ttl_seconds":"x"}`, `{"leader_token":` + `"` + strings.Repeat("A", 43) + `"}`,
		`{`, `[]`, `null`, `{"ttl_seconds":1e400}`, `{"candidate_id":null,"ttl_seconds":null,"metadata":null}`,
		`{"candidate_id":"a","ttl_seconds":9223372036854775807}`, "\xff\xfe", `{"metadata":"` + strings.Repeat("é", 1025) + `"}`,
		// Duplicate keys, invalid UTF-8 and unpaired surrogates, wrong types, trailing data.
		`{"candidate_id":"a","candidate_id":"b"}`, `{"leader_token":"` + won.Token + `","leader_token":"x"}`,
		`{"` + won.Token + `":1,"` + won.Token + `":2}`, "{\"candidate_id\":\"a\",\"metadata\":\"caf\xe9\"}",
		"{\"candidate_id\":\"a\xff\"}", `{"candidate_id":"a","metadata":"\ud800"}`, `{"candidate_id":"\udc00x"}`,
		`{"candidate_id":5}`, `{"metadata":{"a":[1e400]}}`, `{"candidate_id":"a"} {}`, `{"leader_token":` + won.Token + `}`,
	} {
		for op := range 3 {
			f.Add(uint8(op), []byte(seed))
		}
	}
	tokenLike := regexp.MustCompile(`[A-Za-z0-9_-]{43}`)
	allowed := map[string][]int{
		"campaign": {200, 400, 409, 422},
		"renew":    {200, 400, 404, 422},
		"resign":   {200, 400, 404, 422},
	}
	f.Fuzz(func(t *testing.T, op uint8, body []byte) {
		name := []string{"campaign", "renew", "resign"}[op%3]
		if name == "resign" && bytes.Contains(body, []byte(won.Token)) {
			name = "renew" // keep the room's leader: the fuzzer may find the token in the seeds
		}
		w := do("/elections/"+room+"/"+name, body)
		if !slices.Contains(allowed[name], w.Code) {
			t.Fatalf("%s %q: status %d: %s", name, body, w.Code, w.Body)
		}
		if w.Code == http.StatusOK {
			return
		}
		var e struct {
			Error, Code, Details string
			RequestID            string `json:"request_id"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Code == "" || e.Error == "" || e.Details == "" || e.RequestID == "" {
			t.Fatalf("%s %q: %d, not the error shape: %s", name, body, w.Code, w.Body)
		}
		for _, tok := range tokenLike.FindAllString(string(body), -1) {
			if strings.Contains(w.Body.String(), tok) {
				t.Fatalf("%s %q: the error echoes %q: %s", name, body, tok, w.Body)
			}
		}
	})
}
