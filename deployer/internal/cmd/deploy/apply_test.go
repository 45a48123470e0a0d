package deploy

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/config"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/ownership"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainerstub"
)

// failingCreate is a Portainer on loopback whose stack create fails as `docker stack deploy`
// does halfway, after it created the services left.
func failingCreate(t *testing.T, left []string) *portainer.Client {
	t.Helper()
	services := []map[string]map[string]string{}
	for _, name := range left {
		services = append(services, map[string]map[string]string{"Spec": {"Name": name}})
	}
	return portainerstub.Client(t, map[string]portainerstub.Answer{
		"POST /api/stacks/create/swarm/string": {Status: http.StatusInternalServerError, Body: map[string]string{"message": "failed to deploy a stack: image not found"}},
		"GET /api/endpoints/1/docker/services": {Body: services},
	})
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
