// Package portainerstub is a Portainer on loopback that answers fixed JSON per route, for unit
// tests of what the deployer does with one answer (a failed create, a stack deleted meanwhile)
// that the real-Swarm fake (portainertest) cannot be made to give on cue.
package portainerstub

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
)

// Answer is one route's response: Status (default 200) and Body, encoded as JSON.
type Answer struct {
	Status int
	Body   any
}

// Server starts a server that gives routes["METHOD /api/path"] (or routes["/api/path"] for
// any method) and 404 to everything else, and returns its address. It stops with the test.
func Server(t *testing.T, routes map[string]Answer) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := routes[r.Method+" "+r.URL.Path]
		if !ok {
			a, ok = routes[r.URL.Path]
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if a.Status != 0 {
			w.WriteHeader(a.Status)
		}
		_ = json.NewEncoder(w).Encode(a.Body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Client is a client of Server(t, routes) with an API key.
func Client(t *testing.T, routes map[string]Answer) *portainer.Client {
	t.Helper()
	c, err := portainer.New(portainer.Options{URL: Server(t, routes), APIKey: "ptr_test"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Swarm are the routes of endpoint 1, "local", whose engine manages Swarm swarm1.
func Swarm() map[string]Answer {
	return map[string]Answer{
		"GET /api/endpoints/1":              {Body: map[string]any{"Id": 1, "Name": "local", "Type": 1}},
		"GET /api/endpoints/1/docker/swarm": {Body: map[string]any{"ID": "swarm1"}},
	}
}
