package verifyversion

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/release/internal/testrepo"
)

func run(t *testing.T, dir, tag string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := verifyVersionRun(&Options{IO: cmdutil.IOStreams{Out: &out, ErrOut: &out}, Dir: dir, Tag: tag})
	return out.String(), err
}

func TestVerifyVersionAcceptsTheTagOfTheVersionFiles(t *testing.T) {
	dir := testrepo.CopyVersionFiles(t)
	for _, tag := range []string{"v0.1.0", "refs/tags/v0.1.0"} {
		if out, err := run(t, dir, tag); err != nil || out != "0.1.0\n" {
			t.Errorf("verify-version %s = %q, %v; want 0.1.0", tag, out, err)
		}
	}
}

func TestVerifyVersionRefusesBadTags(t *testing.T) {
	dir := testrepo.CopyVersionFiles(t)
	for tag, want := range map[string]string{
		"v0.1.1":       "does not match",
		"0.1.0":        "vX.Y.Z",
		"v0.1":         "vX.Y.Z",
		"v0.1.0-rc.1":  "does not match",
		"lease/v0.1.0": "vX.Y.Z",
	} {
		if _, err := run(t, dir, tag); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("verify-version %s: err = %v, want one containing %q", tag, err, want)
		}
	}
}

func TestVerifyVersionNamesTheFileThatDisagrees(t *testing.T) {
	dir := testrepo.CopyVersionFiles(t)
	p := filepath.Join(dir, "clients/typescript/package.json")
	content, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, bytes.Replace(content, []byte(`"version": "0.1.0"`), []byte(`"version": "0.1.5"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = run(t, dir, "v0.1.0")
	if err == nil || !strings.Contains(err.Error(), "clients/typescript/package.json (version): 0.1.5") || strings.Contains(err.Error(), "lease/go.mod") {
		t.Fatalf("err = %v, want one naming clients/typescript/package.json and only it", err)
	}
}

func TestVerifyVersionNamesThePythonPackage(t *testing.T) {
	dir := testrepo.CopyVersionFiles(t)
	p := filepath.Join(dir, "clients/python/pyproject.toml")
	content, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, bytes.Replace(content, []byte(`version = "0.1.0"`), []byte(`version = "0.1.5"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = run(t, dir, "v0.1.0")
	if err == nil || !strings.Contains(err.Error(), "clients/python/pyproject.toml ([project] version): 0.1.5") {
		t.Fatalf("err = %v, want one naming clients/python/pyproject.toml", err)
	}
}

// The script release CI runs, on this repository: the current version passes, another fails.
func TestVerifyReleaseVersionScript(t *testing.T) {
	root := testrepo.SourceRoot()
	script := filepath.Join(root, "scripts", "verify-release-version.sh")
	good := currentTag(t)
	if out, err := exec.Command(script, good).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", script, good, err, out)
	}
	out, err := exec.Command(script, "v99.0.0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "does not match") {
		t.Fatalf("%s v99.0.0: err = %v, output %s; want a refusal", script, err, out)
	}
	if out, err := exec.Command(script).CombinedOutput(); err == nil || !strings.Contains(string(out), "usage") {
		t.Fatalf("%s without a tag: err = %v, output %s; want the usage", script, err, out)
	}
}

// currentTag is the tag of the version in this repository's root package.json.
func currentTag(t *testing.T) string {
	t.Helper()
	content, err := os.ReadFile(filepath.Join(testrepo.SourceRoot(), "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(content), `"version": "`)
	v, _, _ := strings.Cut(rest, `"`)
	return "v" + v
}
