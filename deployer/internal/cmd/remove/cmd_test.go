package remove

import (
	"bytes"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
)

func TestRemoveAliasAndFlags(t *testing.T) {
	f := &cmdutil.Factory{IO: cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Dir: t.TempDir()}
	var got *Options
	cmd := NewCmdRemove(f, func(o *Options) error { got = o; return nil })
	if len(cmd.Aliases) != 1 || cmd.Aliases[0] != "rm" || cmd.Example == "" {
		t.Fatalf("aliases %v example %q, want rm and an example", cmd.Aliases, cmd.Example)
	}
	cmd.SetArgs([]string{"--env-file", "staging.env", "--stack-name", "staging"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.EnvFile != "staging.env" || !got.Flags.Changed("stack-name") {
		t.Fatalf("options %+v", got)
	}
}

// TestRemoveHasOnlyTheFlagsItUses: remove's flags are Portainer's, the endpoint's and the
// stack's; the images, the lease and the demo's port are deploy's alone.
func TestRemoveHasOnlyTheFlagsItUses(t *testing.T) {
	f := &cmdutil.Factory{IO: cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Dir: t.TempDir()}
	cmd := NewCmdRemove(f, nil)
	for _, name := range []string{"portainer-url", "endpoint", "stack-name", "env-file"} {
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("remove has no --%s", name)
		}
	}
	for _, name := range []string{"image-tag", "image-namespace", "registry", "lease-ttl-ms", "replicas", "demo-port", "demo-port-mode", "docker-socket", "endpoint-mode"} {
		if cmd.Flags().Lookup(name) != nil {
			t.Errorf("remove has deploy's --%s", name)
		}
	}
}
