package remove

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/config"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainerstub"
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

func TestRemoveOfAStackDeletedMeanwhileIsNothingToRemove(t *testing.T) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, config.Prefix) {
			t.Setenv(name, "")
		}
	}
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
