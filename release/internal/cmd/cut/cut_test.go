package cut

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/gitrun"
	"github.com/regbo/lfp-swarm-lease/release/internal/testrepo"
	"github.com/regbo/lfp-swarm-lease/release/internal/versionfiles"
)

// fixture is a work tree of the version files whose upstream is a local bare repository.
type fixture struct {
	dir, bare string
	other     string // see elsewhere
	stderr    bytes.Buffer
	testedAt  []string // the versions RunTests saw, in order
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	for _, kv := range testrepo.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	f := &fixture{dir: testrepo.CopyVersionFiles(t)}
	f.bare = testrepo.WithUpstream(t, f.dir)
	return f
}

// elsewhere runs git in a second clone of the upstream, made on first use: another
// maintainer's work tree.
func (f *fixture) elsewhere(t *testing.T, args ...string) {
	t.Helper()
	if f.other == "" {
		f.other = t.TempDir()
		testrepo.Git(t, f.other, "clone", "--quiet", f.bare, ".")
	}
	testrepo.Git(t, f.other, args...)
}

func (f *fixture) options(level string, dryRun bool) *Options {
	return &Options{
		IO:  cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &f.stderr},
		Dir: f.dir, Git: gitrun.Exec{Dir: f.dir},
		Now: func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) },
		RunTests: func(_ context.Context, version string) error {
			f.testedAt = append(f.testedAt, version)
			// The release tests run against the rewritten files: check they agree there.
			return agreeAt(f.dir, version)
		},
		Level: level, DryRun: dryRun,
	}
}

func agreeAt(dir, version string) error {
	_, locs, err := versionfiles.Read(dir)
	if err != nil {
		return err
	}
	v, err := versionfiles.Agreed(locs)
	if err != nil {
		return err
	}
	if v.String() != version {
		return fmt.Errorf("version files at %s, want %s", v, version)
	}
	return nil
}

func TestReleaseEachLevelPushesCommitAndTagsAtomically(t *testing.T) {
	for level, want := range map[string]string{"patch": "0.1.1", "minor": "0.2.0", "major": "1.0.0"} {
		t.Run(level, func(t *testing.T) {
			f := newFixture(t)
			if err := cutRun(context.Background(), f.options(level, false)); err != nil {
				t.Fatalf("release %s: %v\n%s", level, err, f.stderr.String())
			}
			if len(f.testedAt) != 1 || f.testedAt[0] != want {
				t.Fatalf("release tests ran at %v, want once at %s", f.testedAt, want)
			}
			head := testrepo.Git(t, f.dir, "rev-parse", "HEAD")
			if got := testrepo.Git(t, f.bare, "rev-parse", "refs/heads/main"); got != head {
				t.Fatalf("upstream main = %s, want the release commit %s", got, head)
			}
			for _, tag := range []string{"v" + want, "lease/v" + want, "cli/v" + want, "clients/go/v" + want, "server/v" + want, "deployer/v" + want, "release/v" + want} {
				if typ := testrepo.Git(t, f.bare, "cat-file", "-t", "refs/tags/"+tag); typ != "tag" {
					t.Errorf("upstream tag %s is a %s, want an annotated tag", tag, typ)
				}
				if got := testrepo.Git(t, f.bare, "rev-parse", "refs/tags/"+tag+"^{commit}"); got != head {
					t.Errorf("upstream tag %s points at %s, want %s", tag, got, head)
				}
			}
			// The versions agree everywhere in what the upstream has.
			clone := t.TempDir()
			testrepo.Git(t, clone, "clone", "--quiet", "--branch", "v"+want, f.bare, ".")
			if err := agreeAt(clone, want); err != nil {
				t.Fatalf("in a clone of the tag: %v", err)
			}
			// The Python package is built from the tag: its pyproject.toml carries the version.
			if py, err := os.ReadFile(filepath.Join(clone, "clients/python/pyproject.toml")); err != nil || !bytes.Contains(py, []byte("\nversion = \""+want+"\"\n")) {
				t.Fatalf("clients/python/pyproject.toml of the tag (%v):\n%s", err, py)
			}
			if status := testrepo.Git(t, f.dir, "status", "--porcelain"); status != "" {
				t.Fatalf("work tree not clean after the release:\n%s", status)
			}
		})
	}
}

// snapshot hashes every file of the work tree (including .git) and every ref of both
// repositories, so a test can tell that nothing at all changed.
func snapshot(t *testing.T, f *fixture) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %x\n", p, sha256.Sum256(content))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(h, testrepo.Git(t, f.dir, "for-each-ref"))
	fmt.Fprintln(h, testrepo.Git(t, f.bare, "for-each-ref"))
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestReleaseDryRunChangesNothing(t *testing.T) {
	f := newFixture(t)
	before := snapshot(t, f)
	if err := cutRun(context.Background(), f.options("minor", true)); err != nil {
		t.Fatalf("dry run: %v\n%s", err, f.stderr.String())
	}
	if after := snapshot(t, f); after != before {
		t.Fatal("the dry run changed the work tree or a ref")
	}
	if len(f.testedAt) != 0 {
		t.Fatalf("the dry run ran the release tests at %v", f.testedAt)
	}
	for _, want := range []string{"0.1.0 → 0.2.0", "set cli/go.mod to 0.2.0", "set bun.lock to 0.2.0", "v0.2.0", "lease/v0.2.0", "git push --atomic origin", "nothing changed"} {
		if !strings.Contains(f.stderr.String(), want) {
			t.Errorf("dry-run output lacks %q:\n%s", want, f.stderr.String())
		}
	}
}

func TestReleaseRefusesDirtyTree(t *testing.T) {
	f := newFixture(t)
	if err := os.WriteFile(filepath.Join(f.dir, "notes.txt"), []byte("draft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := cutRun(context.Background(), f.options("patch", false))
	if err == nil || !strings.Contains(err.Error(), "not clean") || !strings.Contains(err.Error(), "notes.txt") {
		t.Fatalf("err = %v, want a refusal naming notes.txt", err)
	}
	if got := testrepo.Git(t, f.bare, "tag"); got != "" {
		t.Fatalf("upstream has tags %q after a refused release", got)
	}
}

func TestReleaseRefusesBranchBehindUpstream(t *testing.T) {
	for _, dryRun := range []bool{false, true} {
		t.Run(fmt.Sprintf("dry-run=%v", dryRun), func(t *testing.T) {
			f := newFixture(t)
			// Someone else pushes a commit the work tree does not have.
			f.elsewhere(t, "commit", "--quiet", "--allow-empty", "-m", "elsewhere")
			f.elsewhere(t, "push", "--quiet", "origin", "main")
			upstreamHead := testrepo.Git(t, f.bare, "rev-parse", "main")

			err := cutRun(context.Background(), f.options("patch", dryRun))
			if err == nil || !strings.Contains(err.Error(), "behind") {
				t.Fatalf("err = %v, want a refusal because the branch is behind", err)
			}
			if got := testrepo.Git(t, f.bare, "rev-parse", "main"); got != upstreamHead {
				t.Fatal("the upstream branch moved")
			}
			if got := testrepo.Git(t, f.bare, "tag"); got != "" {
				t.Fatalf("upstream has tags %q after a refused release", got)
			}
		})
	}
}

func TestReleaseRefusesBadLevel(t *testing.T) {
	f := newFixture(t)
	err := cutRun(context.Background(), f.options("huge", false))
	if err == nil || !strings.Contains(err.Error(), `"huge"`) || !strings.Contains(err.Error(), "patch, minor or major") {
		t.Fatalf("err = %v, want one naming the level and the choices", err)
	}
}

func TestReleaseRefusesExistingTag(t *testing.T) {
	f := newFixture(t)
	// A tag for the next version exists on the upstream only: the release must not
	// overwrite it or fail halfway through the push.
	f.elsewhere(t, "tag", "lease/v0.1.1")
	f.elsewhere(t, "push", "--quiet", "origin", "lease/v0.1.1")
	err := cutRun(context.Background(), f.options("patch", false))
	if err == nil || !strings.Contains(err.Error(), "lease/v0.1.1 exists") {
		t.Fatalf("err = %v, want a refusal naming the tag", err)
	}
	if got := testrepo.Git(t, f.bare, "tag"); got != "lease/v0.1.1" {
		t.Fatalf("upstream tags = %q, want only the stray one", got)
	}
}

func TestReleaseRefusesBranchWithoutUpstream(t *testing.T) {
	f := newFixture(t)
	testrepo.Git(t, f.dir, "branch", "--unset-upstream")
	err := cutRun(context.Background(), f.options("patch", false))
	if err == nil || !strings.Contains(err.Error(), "no upstream") || !strings.Contains(err.Error(), "git push -u") {
		t.Fatalf("err = %v, want a refusal that says how to set an upstream", err)
	}
}

func TestReleaseFailedTestsRestoreTheVersionFiles(t *testing.T) {
	f := newFixture(t)
	opts := f.options("patch", false)
	opts.RunTests = func(context.Context, string) error { return errors.New("a test failed") }
	err := cutRun(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "a test failed") {
		t.Fatalf("err = %v, want the tests' failure", err)
	}
	if status := testrepo.Git(t, f.dir, "status", "--porcelain"); status != "" {
		t.Fatalf("version files not restored:\n%s", status)
	}
	if got := testrepo.Git(t, f.bare, "tag"); got != "" {
		t.Fatalf("upstream has tags %q", got)
	}
}

func TestReleasePushIsAtomic(t *testing.T) {
	f := newFixture(t)
	// The upstream refuses one of the module tags: with an atomic push the branch and the
	// other tags must not arrive either. (The update hook decides per ref, unlike pre-receive,
	// so without --atomic the other refs would be accepted.)
	hook := filepath.Join(f.bare, "hooks", "update")
	script := "#!/bin/sh\n[ \"$1\" = refs/tags/server/v0.1.1 ] && { echo refused >&2; exit 1; }\nexit 0\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	before := testrepo.Git(t, f.bare, "rev-parse", "main")
	err := cutRun(context.Background(), f.options("patch", false))
	if err == nil || !strings.Contains(err.Error(), "not pushed") {
		t.Fatalf("err = %v, want a push failure", err)
	}
	if got := testrepo.Git(t, f.bare, "rev-parse", "main"); got != before {
		t.Fatal("the upstream branch moved although a tag was refused")
	}
	if got := testrepo.Git(t, f.bare, "tag"); got != "" {
		t.Fatalf("upstream has tags %q although the push was refused", got)
	}
}
