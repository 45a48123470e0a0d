package config

import (
	"context"
	"strings"
	"testing"
)

// TestUnknownVariables: Load warns, through the settings kernel, about every variable under the
// prefix that is no setting, naming the closest; what run exports to its child (FENCE) and the
// test suites' variables (TEST_*) draw no warning.
func TestUnknownVariables(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prefix  string
		environ []string
		want    []string // one substring per expected warning, in order
	}{
		{"misspelt setting", "SWARM_LEASE", []string{"SWARM_LEASE_STOR=swarm"}, []string{"SWARM_LEASE_STOR is not a setting and is ignored; the closest is SWARM_LEASE_STORE "}},
		{"misspelt _FILE", "SWARM_LEASE", []string{"SWARM_LEASE_TTL_SM_FILE=/x"}, []string{"the closest is SWARM_LEASE_TTL_MS_FILE "}},
		{"another prefix", "APP", []string{"APP_HOLDERID=a", "SWARM_LEASE_STOR=x"}, []string{"APP_HOLDERID is not a setting and is ignored; the closest is APP_HOLDER_ID "}},
		{"settings and their files", "SWARM_LEASE", []string{"SWARM_LEASE_STORE=swarm", "SWARM_LEASE_TTL_MS_FILE=/x", "SWARM_LEASE_CHILD_CGROUP=off"}, nil},
		{"what run exports to its child", "SWARM_LEASE", []string{"SWARM_LEASE_FENCE=1", "SWARM_LEASE_HOLDER_ID=a", "SWARM_LEASE_NODE_ID=n", "SWARM_LEASE_TASK_ID=t", "SWARM_LEASE_NAMESPACE=x"}, nil},
		{"the child's under another prefix", "APP", []string{"APP_FENCE=1"}, nil},
		{"reserved for tests", "SWARM_LEASE", []string{"SWARM_LEASE_TEST_DOCKER_HOST=unix:///x", "SWARM_LEASE_TEST_PLAIN_DOCKER_HOST=unix:///y"}, nil},
		{"other variables", "SWARM_LEASE", []string{"SWARM_LEASEX=1", "SWARM=1", "PATH=/bin", "XSWARM_LEASE_STOR=1"}, nil},
		{"two, sorted", "SWARM_LEASE", []string{"SWARM_LEASE_TTL=1", "SWARM_LEASE_LISTN=x"}, []string{"SWARM_LEASE_LISTN ", "SWARM_LEASE_TTL is not a setting and is ignored; the closest is SWARM_LEASE_TTL_MS "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			l := Loader{EnvPrefix: tc.prefix, Environ: func() []string { return tc.environ }, Warn: func(w string) { got = append(got, w) }}
			_, _ = l.Load(context.Background()) // warned about before anything fails
			if len(got) != len(tc.want) {
				t.Fatalf("warnings %q, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %q, want it to contain %q", got[i], w)
				}
			}
		})
	}
}
