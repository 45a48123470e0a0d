package ownership

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainerstub"
)

// portainerWith is a Portainer on loopback whose endpoint 1 ("local", Swarm swarm1) holds
// the stack record stack.
func portainerWith(t *testing.T, stack map[string]any) *portainer.Client {
	t.Helper()
	routes := portainerstub.Swarm()
	routes["GET /api/stacks"] = portainerstub.Answer{Body: []map[string]any{stack}}
	routes["GET /api/endpoints/1/docker/services"] = portainerstub.Answer{Body: []any{}}
	return portainerstub.Client(t, routes)
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
