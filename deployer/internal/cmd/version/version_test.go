package version

import (
	"bytes"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/images/buildinfo"
)

func TestVersionShowsTheStamp(t *testing.T) {
	old := [3]string{buildinfo.Version, buildinfo.Commit, buildinfo.Date}
	t.Cleanup(func() { buildinfo.Version, buildinfo.Commit, buildinfo.Date = old[0], old[1], old[2] })
	buildinfo.Version, buildinfo.Commit, buildinfo.Date = "1.2.3", "abc123", "2026-12-01T12:00:00Z"
	var out bytes.Buffer
	if err := versionRun(&Options{IO: cmdutil.IOStreams{Out: &out}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"deployer 1.2.3", "commit abc123", "built 2026-12-01T12:00:00Z"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("version = %q, want %q in it", out.String(), want)
		}
	}
}
