package images

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// files lists the paths in an image's layers.
func files(t *testing.T, img v1.Image) []string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Typeflag == tar.TypeReg {
				out = append(out, "/"+h.Name)
			}
		}
		rc.Close()
	}
	slices.Sort(out)
	return out
}

// TestPublishPushesMultiPlatformIndexes pushes both images to an in-process registry and reads
// them back: one manifest per platform, the binaries in AppDir, the entrypoints and labels.
func TestPublishPushesMultiPlatformIndexes(t *testing.T) {
	long(t, "builds both images' binaries for two platforms")
	reg := httptest.NewServer(registry.New())
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	pub, err := Publish(context.Background(), Build{Root: repoRoot(t), Version: "1.2.3", Commit: "abc"}, host, "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ref        string
		entrypoint string
		files      []string
	}{
		{pub.Controller, "/ko-app/lfp-swarm-lease", []string{"/ko-app/lfp-swarm-lease"}},
		{pub.Demo, "/ko-app/demo", []string{"/ko-app/demo", "/ko-app/lfp-swarm-lease"}},
	} {
		ref, err := name.ParseReference(c.ref, name.Insecure)
		if err != nil {
			t.Fatalf("%s: %v", c.ref, err)
		}
		idx, err := remote.Index(ref)
		if err != nil {
			t.Fatalf("%s: %v", c.ref, err)
		}
		m, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		var platforms []string
		for _, d := range m.Manifests {
			platforms = append(platforms, d.Platform.String())
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Architecture != d.Platform.Architecture || cfg.OS != "linux" {
				t.Errorf("%s %s: config says %s/%s", c.ref, d.Platform, cfg.OS, cfg.Architecture)
			}
			if !slices.Equal(cfg.Config.Entrypoint, []string{c.entrypoint}) || !slices.Contains(cfg.Config.Env, PathEnv) {
				t.Errorf("%s %s: entrypoint %v env %v, want %s and %s", c.ref, d.Platform, cfg.Config.Entrypoint, cfg.Config.Env, c.entrypoint, PathEnv)
			}
			if cfg.Config.Labels["org.opencontainers.image.version"] != "1.2.3" || cfg.Config.Labels["org.opencontainers.image.revision"] != "abc" {
				t.Errorf("%s %s: labels %v", c.ref, d.Platform, cfg.Config.Labels)
			}
			if got := files(t, img); !slices.Equal(got, c.files) {
				t.Errorf("%s %s: files %v, want %v (an empty base)", c.ref, d.Platform, got, c.files)
			}
		}
		if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
			t.Errorf("%s: platforms %v, want linux/amd64 and linux/arm64", c.ref, platforms)
		}
	}
}

func TestBuildRootMustBeTheRepository(t *testing.T) {
	dir := t.TempDir()
	_, err := Publish(context.Background(), Build{Root: dir}, "127.0.0.1:1", "x")
	if err == nil || !strings.Contains(err.Error(), "Build.Root") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("error %v, want one naming Build.Root and %s", err, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
		t.Fatal("created go.work")
	}
}

func TestBuildEnvReplacesTheProcessEnvironment(t *testing.T) {
	t.Setenv("IMAGES_TEST_INHERITED", "yes")
	if env := (Build{}).environ(); !slices.Contains(env, "IMAGES_TEST_INHERITED=yes") {
		t.Error("without Env, go build lost the process environment")
	}
	if env := (Build{Env: []string{"PATH=/bin"}}).environ(); !slices.Equal(env, []string{"PATH=/bin"}) {
		t.Errorf("environment %v, want Build.Env exactly", env)
	}
}

func TestBuildOutputKeepsItsEnd(t *testing.T) {
	tail := &tailBuffer{limit: 8}
	for _, s := range []string{"0123456789", "abc"} {
		if n, err := tail.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := tail.String(); got != "(5 earlier bytes dropped) …56789abc" {
		t.Errorf("kept %q, want the last 8 bytes after a note", got)
	}
}
