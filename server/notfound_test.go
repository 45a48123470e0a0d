package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server"
)

// TestUnroutedRequestsNeverEchoThePath: a token sent to a path that does not exist (or with a
// method the path does not take) is not repeated in the 404/405 body, whichever router part —
// chi's or huma's — answers.
func TestUnroutedRequestsNeverEchoThePath(t *testing.T) {
	e, err := lease.New(memstore.New(), "srv", lease.Identity{HolderID: "observer"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := rooms.New(rooms.NewMemoryStore(), "echo")
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Options{Election: e, Elections: &server.ElectionsOptions{Rooms: m, AdmissionPerMinute: -1}})
	if err != nil {
		t.Fatal(err)
	}
	const token = "tok3nTOK3Ntok3nTOK3Ntok3nTOK3Ntok3nTOK3Nabc" // 43 characters, token-shaped
	cases := []struct {
		method, path string
		status       int
	}{
		{http.MethodPost, "/elections/room-0001/" + token, http.StatusNotFound},
		{http.MethodGet, "/elections/room-0001/" + token, http.StatusNotFound},
		{http.MethodPost, "/elections/room-0001/campaign/" + token, http.StatusNotFound},
		{http.MethodPost, "/" + token, http.StatusNotFound},
		{http.MethodGet, "/v1/" + token, http.StatusNotFound},
		{http.MethodPost, "/elections/room-0001/renew?leader_token=" + token, http.StatusUnsupportedMediaType},
		{http.MethodPut, "/elections/" + token, http.StatusMethodNotAllowed},
		{http.MethodDelete, "/elections/" + token + "/renew", http.StatusMethodNotAllowed},
		{http.MethodPatch, "/elections/" + token + "/watch", http.StatusMethodNotAllowed},
		{http.MethodPost, "/v1/state?" + token, http.StatusMethodNotAllowed},
		{http.MethodPost, "/elections/" + token + "/x/y", http.StatusNotFound},
	}
	for _, c := range cases {
		req := httptest.NewRequest(c.method, c.path, nil)
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, req)
		if w.Code != c.status {
			t.Errorf("%s %s: status %d, want %d: %s", c.method, c.path, w.Code, c.status, w.Body)
		}
		if strings.Contains(w.Body.String(), token) || strings.Contains(strings.Join(w.Header().Values("Location"), " "), token) {
			t.Errorf("%s %s: the answer echoes the token: %s", c.method, c.path, w.Body)
		}
		if !strings.Contains(w.Body.String(), `"request_id"`) {
			t.Errorf("%s %s: not the error shape: %s", c.method, c.path, w.Body)
		}
	}
}
