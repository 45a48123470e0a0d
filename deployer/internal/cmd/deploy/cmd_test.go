package deploy

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/config"
)

func parse(t *testing.T, args ...string) (*Options, error) {
	t.Helper()
	var got *Options
	f := &cmdutil.Factory{IO: cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Dir: t.TempDir()}
	cmd := NewCmdDeploy(f, func(o *Options) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	return got, cmd.Execute()
}

// clearEnvironment unsets the deployer's variables for the test.
func clearEnvironment(t *testing.T) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, config.Prefix) {
			t.Setenv(name, "")
		}
	}
}

func TestDeployFlags(t *testing.T) {
	clearEnvironment(t)
	o, err := parse(t, "--dry-run", "--no-push-images", "--image-tag", "0.1.0", "--stack-name", "staging", "--env-file", "x.env")
	if err != nil {
		t.Fatal(err)
	}
	if !o.DryRun || !o.NoPushImages || o.NoBuildArm || o.EnvFile != "x.env" || o.Publish == nil {
		t.Fatalf("options %+v", o)
	}
	t.Setenv("SWARM_LEASE_DEPLOY_IMAGE_TAG", "from-env")
	cfg, _, err := config.Load(config.Input{Flags: o.Flags, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ImageTag != "0.1.0" || cfg.StackName != "staging" {
		t.Errorf("image tag %q stack %q, want the flags' 0.1.0 and staging", cfg.ImageTag, cfg.StackName)
	}
	if _, err := parse(t, "extra"); err == nil {
		t.Error("a positional argument was accepted")
	}
	for _, secret := range []string{"--portainer-api-key", "--portainer-password", "--registry-token"} {
		if _, err := parse(t, secret, "x"); err == nil || !strings.Contains(err.Error(), "unknown flag") {
			t.Errorf("%s: %v, want an unknown flag (secrets are never arguments)", secret, err)
		}
	}
}

// TestNoPushImagesNeedsATag fails before any read: no Portainer or registry is configured
// that could answer.
func TestNoPushImagesNeedsATag(t *testing.T) {
	clearEnvironment(t)
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_URL", "http://127.0.0.1:1")
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_API_KEY", "ptr_x")
	t.Setenv("SWARM_LEASE_DEPLOY_ENDPOINT", "1")
	t.Setenv("SWARM_LEASE_DEPLOY_IMAGE_NAMESPACE", "me")
	o, err := parse(t, "--no-push-images")
	if err != nil {
		t.Fatal(err)
	}
	err = deployRun(context.Background(), o)
	var cerr *config.Error
	if !errors.As(err, &cerr) || !strings.Contains(err.Error(), "--image-tag") {
		t.Fatalf("error %v, want a config error asking for --image-tag", err)
	}
}
