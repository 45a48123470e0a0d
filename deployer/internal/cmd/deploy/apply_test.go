package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/config"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/ownership"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
)

// failingCreate is a Portainer on loopback whose stack create fails as `docker stack deploy`
// does halfway, after it created the services left.
func failingCreate(t *testing.T, left []string) *portainer.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/stacks/create/swarm/string":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_ = json.NewEncoder(w).Encode(map[string]string{"message": "failed to deploy a stack: image not found"})
		case r.Method == http.MethodGet && r.URL.Path == "/api/endpoints/1/docker/services":
			var out []map[string]map[string]string
			for _, name := range left {
				out = append(out, map[string]map[string]string{"Spec": {"Name": name}})
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(out)
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

func TestFailedCreateNamesTheServicesItLeft(t *testing.T) {
	clearEnvironment(t)
	cfg, _, err := config.Load(config.Input{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	found := ownership.Finding{Endpoint: portainer.Endpoint{ID: 1, Name: "local"}, SwarmID: "swarm1"}
	opts := &Options{IO: cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}}
	s := portainerStack{file: "services: {}\n", image: "x"}

	err = apply(context.Background(), opts, cfg, failingCreate(t, []string{"lfp-demo_controller", "lfp-demo_demo"}), found, s)
	for _, part := range []string{"image not found", "this create left services lfp-demo_controller, lfp-demo_demo", "docker stack rm lfp-demo"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("error %v, want it to contain %q", err, part)
		}
	}

	err = apply(context.Background(), opts, cfg, failingCreate(t, nil), found, s)
	if err == nil || strings.Contains(err.Error(), "docker stack rm") {
		t.Errorf("error %v, want the create's error without a recovery for services that are not there", err)
	}
}
