package ownership

import (
	"errors"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
)

func TestUnchangedRefusesAStackThatMovedDuringTheDeploy(t *testing.T) {
	ep := portainer.Endpoint{ID: 1, Name: "local"}
	stack := func(id int) *portainer.Stack { return &portainer.Stack{ID: id, Name: "lfp-demo"} }
	none := Finding{Endpoint: ep, SwarmID: "s1"}
	with := func(id int) Finding { return Finding{Endpoint: ep, SwarmID: "s1", Stack: stack(id)} }
	cases := []struct {
		name        string
		plan, now   Finding
		wantChanged bool
	}{
		{"still none", none, none, false},
		{"the same record", with(7), with(7), false},
		{"created meanwhile", none, with(7), true},
		{"deleted meanwhile", with(7), none, true},
		{"recreated meanwhile", with(7), with(8), true},
		{"another endpoint", none, Finding{Endpoint: portainer.Endpoint{ID: 2, Name: "local"}, SwarmID: "s1"}, true},
		{"another Swarm", none, Finding{Endpoint: ep, SwarmID: "s2"}, true},
	}
	for _, c := range cases {
		err := c.plan.Unchanged(c.now)
		if errors.Is(err, ErrChanged) != c.wantChanged {
			t.Errorf("%s: error %v, want changed %v", c.name, err, c.wantChanged)
		}
	}
}
