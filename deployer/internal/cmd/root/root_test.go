package root

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/config"
	"github.com/regbo/lfp-swarm-lease/images/buildinfo"
	"github.com/spf13/cobra"
)

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{fmt.Errorf("deploy: %w", &config.Error{Variable: "SWARM_LEASE_DEPLOY_REPLICAS"}), 2},
		{errors.New("portainer: 401"), 1},
		{&cmdutil.UsageError{Err: errors.New("unknown flag: --bogus")}, 2},
		{errors.New(`unknown command "deplyo" for "deployer"`), 2},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestEveryCommandIsWiredWithAnExample(t *testing.T) {
	cmd := NewCmdRoot(&cmdutil.Factory{IO: cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}})
	for _, args := range [][]string{{"deploy"}, {"remove"}, {"rm"}, {"version"}} {
		c, _, err := cmd.Find(args)
		if err != nil || c == cmd {
			t.Errorf("%v: not a command (%v)", args, err)
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.Hidden && c.Name() != "help" && c.Name() != "completion" && c.Example == "" {
			t.Errorf("%q has no example in its help", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cmd)
}

func TestVersionFlagPrintsTheVersionLine(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var out bytes.Buffer
		cmd := NewCmdRoot(&cmdutil.Factory{IO: cmdutil.IOStreams{Out: &out, ErrOut: &bytes.Buffer{}}})
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if got, want := out.String(), buildinfo.Get().Line("deployer")+"\n"; got != want {
			t.Errorf("%v printed %q, want %q", args, got, want)
		}
	}
}

// TestFlagErrorsAreUsageErrors: a flag a command does not have, or a value of the wrong type,
// is a *UsageError whatever the command, and exits 2.
func TestFlagErrorsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"remove", "--bogus"}, {"deploy", "--replicas", "three"}, {"--bogus"}} {
		cmd := NewCmdRoot(&cmdutil.Factory{IO: cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}})
		cmd.SetArgs(args)
		err := cmd.Execute()
		var usage *cmdutil.UsageError
		if !errors.As(err, &usage) || ExitCode(err) != 2 {
			t.Errorf("%v: %v (%T), exit %d; want a *UsageError and exit 2", args, err, err, ExitCode(err))
		}
	}
}
