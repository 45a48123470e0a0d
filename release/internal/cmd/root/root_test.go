package root

import (
	"bytes"
	"errors"
	"testing"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/release/internal/cmdutil"
)

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("release: the work tree is not clean"), 1},
		{&UsageError{Err: errors.New("unknown flag: --bogus")}, 2},
		{errors.New(`unknown command "cutt" for "release"`), 2},
		{errors.New("accepts 1 arg(s), received 0"), 2},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

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
	if err := cmd.Execute(); ExitCode(err) != 2 {
		t.Fatalf("cut --bogus: err %v, exit %d; want a usage error, exit 2", err, ExitCode(err))
	}
}
