package cut

import (
	"bytes"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
)

func parse(t *testing.T, args ...string) (*Options, error) {
	t.Helper()
	var got *Options
	f := &cmdutil.Factory{IO: cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Dir: t.TempDir()}
	cmd := NewCmdCut(f, func(o *Options) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	return got, err
}

func TestReleaseArguments(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		level  string
		dryRun bool
	}{
		{nil, "patch", false},
		{[]string{"minor"}, "minor", false},
		{[]string{"major", "--dry-run"}, "major", true},
		{[]string{"--dry-run"}, "patch", true},
	} {
		o, err := parse(t, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if o.Level != tc.level || o.DryRun != tc.dryRun || o.RunTests == nil {
			t.Errorf("%v: level %q dry-run %v, want %q %v and the default release tests", tc.args, o.Level, o.DryRun, tc.level, tc.dryRun)
		}
	}
	if _, err := parse(t, "minor", "major"); err == nil || !strings.Contains(err.Error(), "at most 1 arg") {
		t.Fatalf("two levels: err = %v, want a usage error", err)
	}
}
