package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestUnroutedRequestsNeverEchoThePath: a token sent to a path that does not exist (or with a
// method the path does not take) is not repeated in the 404/405 body, whichever router part —
// chi's or huma's — answers.
func TestUnroutedRequestsNeverEchoThePath(t *testing.T) {
	base := electionsServer(t)
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
		{http.MethodGet, "/docs/" + token, http.StatusNotFound},
	}
	for _, c := range cases {
		status, header, body := send(t, c.method, base+c.path, "", "")
		if status != c.status {
			t.Errorf("%s %s: status %d, want %d: %s", c.method, c.path, status, c.status, body)
		}
		if strings.Contains(body, token) || strings.Contains(strings.Join(header.Values("Location"), " "), token) {
			t.Errorf("%s %s: the answer echoes the token: %s", c.method, c.path, body)
		}
		if !strings.HasPrefix(c.path, "/docs/") && !strings.Contains(body, `"request_id"`) { // the docs' file server answers its own plain 404
			t.Errorf("%s %s: not the error shape: %s", c.method, c.path, body)
		}
	}
}
