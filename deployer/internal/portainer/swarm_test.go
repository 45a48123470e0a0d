package portainer_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// When the swarm inspect is not answered (an agent or a proxy that does not pass it), the
// Swarm ID comes from docker info.
func TestSwarmIDFallsBackToDockerInfo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/endpoints/3/docker/info":
			_, _ = w.Write([]byte(`{"Swarm":{"LocalNodeState":"active","ControlAvailable":true,"Cluster":{"ID":"cluster-from-info"}}}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"page not found"}`))
		}
	}))
	t.Cleanup(srv.Close)
	id, err := newClient(t, optionsFor(srv.URL)).SwarmID(testContext(t), 3)
	if err != nil || id != "cluster-from-info" {
		t.Fatalf("SwarmID = %q, %v; want cluster-from-info", id, err)
	}
}
