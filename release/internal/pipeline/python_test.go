package pipeline

import (
	"archive/zip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The sdist and the wheel of the Python client in the throwaway release, built as release.yml
// builds them (offline here, with Debian's build and hatchling): both carry the release version,
// and the wheel ships the package with its py.typed marker. Publishing is PyPI's trusted
// publishing, which only GitHub can exercise.
func TestPythonDistributionsOfTheThrowawayRelease(t *testing.T) {
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import build, hatchling").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Debian's python3-build and python3-hatchling are not installed and CI=true: %v", err)
		}
		t.Skipf("Debian's python3-build and python3-hatchling are not installed (%v); CI=true makes this a failure", err)
	}
	// A copy of the clone, since building writes into the tree other tests read.
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "--quiet", "--branch", "v"+throwawayVersion, taggedClone(t), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	dist := t.TempDir()
	build := exec.Command(python, "-m", "build", "--no-isolation", "--skip-dependency-check", "--outdir", dist, ".")
	build.Dir = filepath.Join(clone, "clients", "python")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("python -m build: %v\n%s", err, out)
	}
	sdist := filepath.Join(dist, "lfp_swarm_lease-"+throwawayVersion+".tar.gz")
	wheel := filepath.Join(dist, "lfp_swarm_lease-"+throwawayVersion+"-py3-none-any.whl")
	if _, err := os.Stat(sdist); err != nil {
		t.Fatalf("no sdist at the release version: %v", err)
	}
	z, err := zip.OpenReader(wheel)
	if err != nil {
		t.Fatalf("no wheel at the release version: %v", err)
	}
	defer z.Close()
	files := map[string]*zip.File{}
	for _, f := range z.File {
		files[f.Name] = f
	}
	for _, want := range []string{"lfp_swarm_lease/__init__.py", "lfp_swarm_lease/py.typed"} {
		if files[want] == nil {
			t.Errorf("the wheel lacks %s", want)
		}
	}
	meta := files["lfp_swarm_lease-"+throwawayVersion+".dist-info/METADATA"]
	if meta == nil {
		t.Fatal("the wheel has no METADATA")
	}
	r, err := meta.Open()
	if err != nil {
		t.Fatal(err)
	}
	content, _ := io.ReadAll(r)
	r.Close()
	for _, want := range []string{"Name: lfp-swarm-lease\n", "Version: " + throwawayVersion + "\n", "Requires-Python: >=3.10\n"} {
		if !strings.Contains(string(content), want) {
			t.Errorf("the wheel's METADATA lacks %q:\n%s", want, content)
		}
	}
	if strings.Contains(string(content), "Requires-Dist:") {
		t.Errorf("the wheel has runtime dependencies:\n%s", content)
	}
}
