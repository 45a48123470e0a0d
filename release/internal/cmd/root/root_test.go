package root

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
)

func TestEveryCommandIsWiredWithAnExample(t *testing.T) {
	cmd := NewCmdRoot(&cmdutil.Factory{IO: cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}})
	for _, args := range [][]string{{"cut"}, {"verify-version"}} {
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

func TestAnUnknownFlagIsAUsageError(t *testing.T) {
	cmd := NewCmdRoot(&cmdutil.Factory{IO: cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}})
	cmd.SetArgs([]string{"cut", "--bogus"})
	if err := cmd.Execute(); cmdutil.ExitCode(err) != 2 {
		t.Fatalf("cut --bogus: err %v, exit %d; want a usage error, exit 2", err, cmdutil.ExitCode(err))
	}
}
