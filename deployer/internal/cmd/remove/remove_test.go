package remove

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/config"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainerstub"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainertest"
)

// vanishingStack is a Portainer on loopback that lists the stack and answers its delete with
// 404, as when someone deleted it between the list and the delete.
func vanishingStack(t *testing.T) string {
	t.Helper()
	routes := portainerstub.Swarm()
	routes["GET /api/stacks"] = portainerstub.Answer{Body: []map[string]any{{"Id": 7, "Name": "lfp-demo", "Type": 1, "SwarmId": "swarm1", "EndpointId": 1}}}
	routes["DELETE /api/stacks/7"] = portainerstub.Answer{Status: http.StatusNotFound, Body: map[string]string{"message": "Unable to find a stack with the specified identifier inside the database"}}
	return portainerstub.Server(t, routes)
}

// clearSettings unsets every deployer setting of the test process's environment.
func clearSettings(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, config.Prefix) {
			t.Setenv(name, "")
		}
	}
}

func TestRemoveOfAStackDeletedMeanwhileIsNothingToRemove(t *testing.T) {
	clearSettings(t)
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_URL", vanishingStack(t))
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

// An endpoint name Portainer does not have is said once, with the setting to fix.
func TestUnknownEndpointNameIsSaidOnce(t *testing.T) {
	fake := portainertest.Start(t, portainertest.Options{APIKeys: []string{"ptr_test"}})
	clearSettings(t)
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_URL", fake.URL())
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_API_KEY", "ptr_test")
	t.Setenv("SWARM_LEASE_DEPLOY_ENDPOINT", "nowhere")
	err := removeRun(context.Background(), &Options{IO: cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Dir: t.TempDir()})
	if !errors.Is(err, portainer.ErrEndpointNotFound) || !strings.Contains(err.Error(), "SWARM_LEASE_DEPLOY_ENDPOINT") {
		t.Fatalf("remove: %v, want ErrEndpointNotFound naming the setting", err)
	}
	// Before, the client's error said it, gave advice, and the settings' advice followed.
	if strings.Count(err.Error(), "portainer:") != 1 || strings.Count(err.Error(), `"nowhere"`) != 1 {
		t.Errorf("the error repeats itself: %v", err)
	}
}
