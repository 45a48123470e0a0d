package imagestest

import (
	"archive/tar"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/regbo/lfp-swarm-lease/images"
)

// binaries writes stand-ins for static binaries (Image never runs them).
func binaries(t *testing.T, names ...string) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("#!/bin/true "+n), 0o755); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// The image is the recipe's: every binary in images.AppDir, executable, the first the
// entrypoint, PATH the recipe's, the platform the tests' engine's.
func TestImageIsTheRecipesLayout(t *testing.T) {
	img := Image(t, binaries(t, "lfp-swarm-lease", "testchild")...)
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Config.Entrypoint, []string{images.AppDir + "/lfp-swarm-lease"}; !slices.Equal(got, want) {
		t.Errorf("entrypoint %v, want %v", got, want)
	}
	if !slices.Equal(cfg.Config.Env, []string{images.PathEnv}) {
		t.Errorf("env %v, want %s", cfg.Config.Env, images.PathEnv)
	}
	if cfg.OS != Platform.OS || cfg.Architecture != Platform.Architecture {
		t.Errorf("platform %s/%s, want %s/%s", cfg.OS, cfg.Architecture, Platform.OS, Platform.Architecture)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
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
				if h.Mode&0o111 == 0 {
					t.Errorf("/%s is not executable", h.Name)
				}
				files = append(files, "/"+h.Name)
			}
		}
		rc.Close()
	}
	slices.Sort(files)
	if want := []string{Path("lfp-swarm-lease"), Path("testchild")}; !slices.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
}

// Push writes the image to a loopback registry, from which it reads back unchanged.
func TestPushToALoopbackRegistry(t *testing.T) {
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	img := Image(t, binaries(t, "sleeper")...)
	ref := strings.TrimPrefix(reg.URL, "http://") + "/imagestest/sleeper:1"
	Push(t, ref, img)
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	got, err := remote.Image(tag)
	if err != nil {
		t.Fatal(err)
	}
	gotDigest, _ := got.Digest()
	wantDigest, _ := img.Digest()
	if gotDigest != wantDigest {
		t.Fatalf("the registry has %s, want %s", gotDigest, wantDigest)
	}
}
