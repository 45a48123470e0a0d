package pipeline

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/regbo/lfp-swarm-lease/release/internal/testrepo"
)

// goreleaser runs goreleaser in dir with the environment of a test release: no GitHub
// release, nothing published. Its output goes to the test's log line by line as it comes, so
// that go test -v shows the minutes of building as they pass; it is also returned.
func goreleaser(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	t.Logf("goreleaser %s", strings.Join(args, " "))
	cmd := exec.Command(releaseTool(t, "goreleaser"), args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), testrepo.Env()...), append([]string{"GITHUB_RELEASE=false", "GITHUB_TOKEN="}, env...)...)
	out := &lineLog{t: t}
	// One writer for both: os/exec then calls its Write from one goroutine at a time.
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	out.flush()
	if err != nil {
		t.Fatalf("goreleaser %s: %v (its output is above)", strings.Join(args, " "), err)
	}
	return out.all.String()
}

// lineLog logs each complete line written to it and keeps everything.
type lineLog struct {
	t       *testing.T
	all     bytes.Buffer
	partial []byte
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.all.Write(p)
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.t.Log(string(bytes.TrimRight(l.partial[:i], "\r")))
		l.partial = l.partial[i+1:]
	}
}

// flush logs what is left of a last line without a newline.
func (l *lineLog) flush() {
	if len(l.partial) > 0 {
		l.t.Log(string(l.partial))
		l.partial = nil
	}
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
	Extra  struct {
		// ID is the build's id in .goreleaser.yaml, e.g. deployer-arm64.
		ID string `json:"ID"`
	} `json:"extra"`
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

var (
	releaseOnce sync.Once
	releaseKept string
)

// throwawayRelease makes a real release of the throwaway tag in the clone (the whole matrix,
// once per test binary: goreleaser release into the clone's dist/) and returns a directory that
// keeps its checksums.txt and lfp-swarm-lease archives, which later builds in the clone do not
// overwrite: the release job hands the same files to the Python wheels.
func throwawayRelease(t *testing.T) string {
	t.Helper()
	clone := taggedClone(t)
	releaseOnce.Do(func() {
		goreleaser(t, clone, []string{"BUILD_ARM=true"}, "release", "--clean", "--parallelism", "2")
		dist := filepath.Join(clone, "dist")
		kept := filepath.Join(scratch, "release")
		archives, err := filepath.Glob(filepath.Join(dist, "lfp-swarm-lease_*"))
		if err != nil || len(archives) == 0 {
			t.Fatalf("no lfp-swarm-lease archives in %s: %v", dist, err)
		}
		if err := os.MkdirAll(kept, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range append(archives, filepath.Join(dist, "checksums.txt")) {
			content, err := os.ReadFile(f)
			if err == nil {
				err = os.WriteFile(filepath.Join(kept, filepath.Base(f)), content, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		releaseKept = kept
	})
	if releaseKept == "" {
		t.Fatal("the throwaway release failed (the first test that made it says why)")
	}
	return releaseKept
}

// A real release of the throwaway tag builds every binary for every platform (the whole
// matrix, once), with archives and checksums and the version stamped; BUILD_ARM=false leaves
// the arm64 builds out. That last claim is about the arm64 build entries' skip switch, not about
// the platforms: it is checked with one build for this machine's platform per entry that is not
// skipped (goreleaser build --single-target), 3 builds instead of another 9 plus archives.
func TestGoreleaserReleaseOfAThrowawayTag(t *testing.T) {
	clone := taggedClone(t)
	throwawayRelease(t)
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
		// The API's contract (what /docs shows) names the release's version too.
		if a.Name == "lfp-swarm-lease" {
			doc, err := exec.Command(filepath.Join(clone, a.Path), "openapi").Output()
			var contract struct {
				Info struct{ Version string } `json:"info"`
			}
			if err != nil || json.Unmarshal(doc, &contract) != nil || contract.Info.Version != throwawayVersion {
				t.Errorf("%s openapi: info.version %q (%v), want %s", a.Name, contract.Info.Version, err, throwawayVersion)
			}
		}
	}

	var armBuilds []string
	for _, a := range arts {
		if a.Type == "Binary" && strings.HasSuffix(a.Extra.ID, "-arm64") && !slices.Contains(armBuilds, a.Extra.ID) {
			armBuilds = append(armBuilds, a.Extra.ID)
		}
	}
	if len(armBuilds) != 3 {
		t.Errorf("the release built arm64 from %v, want the three *-arm64 entries", armBuilds)
	}

	t.Run("BUILD_ARM=false", func(t *testing.T) {
		goreleaser(t, clone, []string{"BUILD_ARM=false"}, "build", "--clean", "--single-target", "--parallelism", "2")
		var ids []string
		for _, a := range readArtifacts(t, dist) {
			if a.Type == "Binary" {
				ids = append(ids, a.Extra.ID)
			}
		}
		slices.Sort(ids)
		if want := []string{"demo-amd64", "deployer-amd64", "lfp-swarm-lease-amd64"}; !slices.Equal(ids, want) {
			t.Errorf("BUILD_ARM=false built %v, want only %v", ids, want)
		}
	})
}
