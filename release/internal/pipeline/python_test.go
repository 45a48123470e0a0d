package pipeline

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The Python package of the throwaway release, built as release.yml's pypi job builds it
// (offline here, with Debian's build and hatchling): scripts/build-wheels.sh --from-release on
// the release's own archives. Every platform's wheel and the sdist carry the release version;
// build-wheels.sh checks each wheel's tags against its binary (file -b); each wheel's binary is
// byte for byte the one of the release's archive for its platform; the Linux x86_64 wheel's
// binary reports the release version; the pure wheel ships the package with its py.typed
// marker and no runtime dependency. Publishing is PyPI's trusted publishing, which only GitHub
// can exercise.
func TestPythonDistributionsOfTheThrowawayRelease(t *testing.T) {
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import build, hatchling").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Debian's python3-build and python3-hatchling are not installed and CI=true: %v", err)
		}
		t.Skipf("Debian's python3-build and python3-hatchling are not installed (%v); CI=true makes this a failure", err)
	}
	requireCommand(t, "file", "apt-get install file")
	release := throwawayRelease(t)
	// A copy of the clone, since building writes into the tree other tests read.
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "--quiet", "--branch", "v"+throwawayVersion, taggedClone(t), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	build := exec.Command("scripts/build-wheels.sh", "--from-release", release)
	build.Dir = clone
	out, err := build.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/build-wheels.sh --from-release: %v\n%s", err, out)
	}
	t.Logf("scripts/build-wheels.sh --from-release:\n%s", out)
	dist := filepath.Join(clone, "clients", "python", "dist")
	prefix := filepath.Join(dist, "lfp_swarm_lease-"+throwawayVersion)
	if _, err := os.Stat(prefix + ".tar.gz"); err != nil {
		t.Fatalf("no sdist at the release version: %v", err)
	}
	wheels := map[string]string{ // platform → wheel platform tags
		"linux_amd64":  "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64",
		"linux_arm64":  "manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64",
		"darwin_amd64": "macosx_12_0_x86_64",
		"darwin_arm64": "macosx_12_0_arm64",
	}
	for platform, tags := range wheels {
		wheel := readZip(t, prefix+"-py3-none-"+tags+".whl")
		bundled := wheel["lfp_swarm_lease/_bin/lfp-swarm-lease"]
		archived := fromArchive(t, filepath.Join(release, archiveName("lfp-swarm-lease", platform)), "lfp-swarm-lease")
		if bundled == nil || sha256.Sum256(bundled) != sha256.Sum256(archived) {
			t.Errorf("the %s wheel does not carry the binary of the release's %s archive", tags, platform)
		}
		if platform != "linux_amd64" {
			continue
		}
		bin := filepath.Join(t.TempDir(), "lfp-swarm-lease")
		if err := os.WriteFile(bin, bundled, 0o755); err != nil {
			t.Fatal(err)
		}
		said, err := exec.Command(bin, "version").CombinedOutput()
		if err != nil || !strings.HasPrefix(string(said), "lfp-swarm-lease "+throwawayVersion+" ") {
			t.Errorf("lfp-swarm-lease version in the linux/amd64 wheel: %q (%v), want version %s", said, err, throwawayVersion)
		}
	}

	pure := readZip(t, prefix+"-py3-none-any.whl")
	for _, want := range []string{"lfp_swarm_lease/__init__.py", "lfp_swarm_lease/py.typed"} {
		if pure[want] == nil {
			t.Errorf("the pure wheel lacks %s", want)
		}
	}
	meta := string(pure["lfp_swarm_lease-"+throwawayVersion+".dist-info/METADATA"])
	for _, want := range []string{"Name: lfp-swarm-lease\n", "Version: " + throwawayVersion + "\n", "Requires-Python: >=3.10\n"} {
		if !strings.Contains(meta, want) {
			t.Errorf("the wheel's METADATA lacks %q:\n%s", want, meta)
		}
	}
	if strings.Contains(meta, "Requires-Dist:") {
		t.Errorf("the wheel has runtime dependencies:\n%s", meta)
	}
}

// readZip returns the files of the zip archive at path, by name.
func readZip(t *testing.T, path string) map[string][]byte {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatalf("wheel: %v", err)
	}
	defer z.Close()
	files := map[string][]byte{}
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		content, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name] = content
	}
	return files
}

// fromArchive returns the file name of the .tar.gz archive at path.
func fromArchive(t *testing.T, path, name string) []byte {
	t.Helper()
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := gzip.NewReader(bytes.NewReader(content))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s has no %s: %v", path, name, err)
		}
		if h.Name == name {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
	}
}
