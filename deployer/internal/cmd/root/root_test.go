package root

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/config"
)

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{fmt.Errorf("deploy: %w", &config.Error{Variable: "SWARM_LEASE_DEPLOY_REPLICAS"}), 2},
		{errors.New("portainer: 401"), 1},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestDeployAndRemoveAreWiredWithExamples(t *testing.T) {
	cmd := NewCmdRoot(&cmdutil.Factory{IO: cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}})
	for _, args := range [][]string{{"deploy"}, {"remove"}, {"rm"}} {
		c, _, err := cmd.Find(args)
		if err != nil || c.Example == "" {
			t.Errorf("%v: %v, example %q", args, err, c.Example)
		}
	}
	if cmd.Example == "" {
		t.Error("the root command has no example")
	}
}
