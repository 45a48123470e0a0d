package version

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/images/buildinfo"
)

// TestVersionShowsVersionCommitAndDate: text and JSON carry what the release build stamped.
func TestVersionShowsVersionCommitAndDate(t *testing.T) {
	info := func() buildinfo.Info {
		return buildinfo.Info{Version: "v1.2.3", Commit: "abc123", Date: "2026-12-01T12:00:00Z"}
	}
	var out bytes.Buffer
	if err := versionRun(&Options{IO: cmdutil.IOStreams{Out: &out}, Info: info}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"lfp-swarm-lease v1.2.3", "commit abc123", "built 2026-12-01T12:00:00Z"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("%q lacks %q", out.String(), want)
		}
	}
	out.Reset()
	if err := versionRun(&Options{IO: cmdutil.IOStreams{Out: &out}, JSON: true, Info: info}); err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got["version"] != "v1.2.3" || got["commit"] != "abc123" || got["date"] != "2026-12-01T12:00:00Z" || got["go"] == "" {
		t.Fatalf("%v: %s", err, out.String())
	}
}
