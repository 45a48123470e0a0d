package remove

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/config"
)

// vanishingStack is a Portainer on loopback that lists the stack and answers its delete with
// 404, as when someone deleted it between the list and the delete.
func vanishingStack(t *testing.T) *httptest.Server {
	t.Helper()
	answer := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/api/endpoints/1":
			answer(w, map[string]any{"Id": 1, "Name": "local", "Type": 1})
		case r.Method == http.MethodGet && r.URL.Path == "/api/endpoints/1/docker/swarm":
			answer(w, map[string]any{"ID": "swarm1"})
		case r.Method == http.MethodGet && r.URL.Path == "/api/stacks":
			answer(w, []map[string]any{{"Id": 7, "Name": "lfp-demo", "Type": 1, "SwarmId": "swarm1", "EndpointId": 1}})
		case r.Method == http.MethodDelete && r.URL.Path == "/api/stacks/7":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(map[string]string{"message": "Unable to find a stack with the specified identifier inside the database"})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRemoveOfAStackDeletedMeanwhileIsNothingToRemove(t *testing.T) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, config.Prefix) {
			t.Setenv(name, "")
		}
	}
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_URL", vanishingStack(t).URL)
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_API_KEY", "ptr_test")
	t.Setenv("SWARM_LEASE_DEPLOY_ENDPOINT", "1")
	out := &bytes.Buffer{}
	opts := &Options{IO: cmdutil.IOStreams{Out: out, ErrOut: &bytes.Buffer{}}, Dir: t.TempDir()}
	if err := removeRun(context.Background(), opts); err != nil {
		t.Fatalf("remove: %v, want success", err)
	}
	if !strings.Contains(out.String(), "nothing to remove") {
		t.Errorf("output %q, want nothing to remove", out)
	}
}
