package ownership

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
)

// portainerWith is a Portainer on loopback whose endpoint 1 ("local", Swarm swarm1) holds
// the stack record stack.
func portainerWith(t *testing.T, stack map[string]any) *portainer.Client {
	t.Helper()
	answer := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/endpoints/1":
			answer(w, map[string]any{"Id": 1, "Name": "local", "Type": 1})
		case "/api/endpoints/1/docker/swarm":
			answer(w, map[string]any{"ID": "swarm1"})
		case "/api/stacks":
			answer(w, []map[string]any{stack})
		case "/api/endpoints/1/docker/services":
			answer(w, []any{})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := portainer.New(portainer.Options{URL: srv.URL, APIKey: "ptr_test"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFindSaysWhoseTheNameIs(t *testing.T) {
	cases := []struct {
		name  string
		stack map[string]any
		want  string
	}{
		{"a Compose stack on this endpoint", map[string]any{"Id": 4, "Name": "lfp-demo", "Type": 2, "EndpointId": 1}, "is a Compose stack, not a Swarm stack"},
		{"a Swarm stack of an earlier Swarm", map[string]any{"Id": 5, "Name": "lfp-demo", "Type": 1, "SwarmId": "old", "EndpointId": 1}, "was deployed to another Swarm (cluster old"},
		{"a Swarm stack of another endpoint", map[string]any{"Id": 6, "Name": "lfp-demo", "Type": 1, "SwarmId": "swarm1", "EndpointId": 2}, "belongs to endpoint 2"},
	}
	for _, c := range cases {
		_, err := Find(context.Background(), portainerWith(t, c.stack), "1", "lfp-demo")
		if !errors.Is(err, ErrNotOurs) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want ErrNotOurs saying %q", c.name, err, c.want)
		}
	}
	f, err := Find(context.Background(), portainerWith(t, map[string]any{"Id": 7, "Name": "lfp-demo", "Type": 1, "SwarmId": "swarm1", "EndpointId": 1}), "1", "lfp-demo")
	if err != nil || f.Stack == nil || f.Stack.ID != 7 {
		t.Errorf("the deployer's own stack: finding %+v, error %v", f, err)
	}
}
