package pipeline

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/testrepo"
)

// goreleaser runs goreleaser in dir with the environment of a test release: no GitHub
// release, nothing published.
func goreleaser(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(releaseTool(t, "goreleaser"), args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), testrepo.Env()...), append([]string{"GITHUB_RELEASE=false", "GITHUB_TOKEN="}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("goreleaser %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestGoreleaserCheck(t *testing.T) {
	goreleaser(t, testrepo.SourceRoot(), nil, "check")
}

// artifact is an entry of goreleaser's dist/artifacts.json.
type artifact struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Goos   string `json:"goos"`
	Goarch string `json:"goarch"`
	Type   string `json:"type"`
}

func readArtifacts(t *testing.T, dist string) []artifact {
	t.Helper()
	content, err := os.ReadFile(filepath.Join(dist, "artifacts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var arts []artifact
	if err := json.Unmarshal(content, &arts); err != nil {
		t.Fatalf("dist/artifacts.json: %v", err)
	}
	return arts
}

var platforms = []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64", "windows_amd64", "windows_arm64"}

func archiveName(binary, platform string) string {
	ext := ".tar.gz"
	if strings.HasPrefix(platform, "windows") {
		ext = ".zip"
	}
	return binary + "_" + throwawayVersion + "_" + platform + ext
}

// A real release of the throwaway tag builds every binary for every platform (the whole
// matrix, once), with archives and checksums and the version stamped; BUILD_ARM=false leaves
// the arm64 ones out.
func TestGoreleaserReleaseOfAThrowawayTag(t *testing.T) {
	clone := taggedClone(t)
	goreleaser(t, clone, []string{"BUILD_ARM=true"}, "release", "--clean", "--parallelism", "2")
	dist := filepath.Join(clone, "dist")
	arts := readArtifacts(t, dist)
	checksums, err := os.ReadFile(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var archives []string
	for _, a := range arts {
		if a.Type == "Archive" {
			archives = append(archives, a.Name)
		}
	}
	for _, binary := range []string{"lfp-swarm-lease", "demo", "deployer"} {
		for _, platform := range platforms {
			name := archiveName(binary, platform)
			if !slices.Contains(archives, name) {
				t.Errorf("no archive %s; archives: %v", name, archives)
			}
			if _, err := os.Stat(filepath.Join(dist, name)); err != nil {
				t.Errorf("archive %s: %v", name, err)
			}
			if !strings.Contains(string(checksums), "  "+name+"\n") {
				t.Errorf("checksums.txt lacks %s", name)
			}
		}
	}
	commit := strings.TrimSpace(testrepo.Git(t, clone, "rev-parse", "HEAD"))
	for _, a := range arts {
		// The demo has no version command; the image recipe's tests check its stamp.
		if a.Type != "Binary" || a.Goos != "linux" || a.Goarch != "amd64" || a.Name == "demo" {
			continue
		}
		out, err := exec.Command(filepath.Join(clone, a.Path), "version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s version: %v\n%s", a.Path, err, out)
		}
		if !strings.Contains(string(out), throwawayVersion) {
			t.Errorf("%s version = %q, want %s", a.Name, out, throwawayVersion)
		}
		if !strings.Contains(string(out), commit[:7]) {
			t.Errorf("%s version = %q, want the commit %s", a.Name, out, commit)
		}
	}

	t.Run("BUILD_ARM=false", func(t *testing.T) {
		goreleaser(t, clone, []string{"BUILD_ARM=false"}, "release", "--clean", "--parallelism", "2")
		for _, a := range readArtifacts(t, dist) {
			if a.Goarch == "arm64" {
				t.Errorf("BUILD_ARM=false built %s for arm64", a.Name)
			}
		}
		if _, err := os.Stat(filepath.Join(dist, archiveName("lfp-swarm-lease", "linux_amd64"))); err != nil {
			t.Errorf("BUILD_ARM=false: %v", err)
		}
	})
}
