// Package imagestest makes the Docker tests' images with the product's one image recipe
// (package images), so that the tests run images laid out as the released ones are: the static
// binaries in images.AppDir, PATH ending there, the first binary the entrypoint, no base. No
// Docker build and no pull: Load hands the engine a tarball, Push writes to a registry.
package imagestest

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/regbo/lfp-swarm-lease/images"
)

// Platform is the platform of the tests' images: linux on this machine's architecture, the
// platform of the binaries a test builds for its engine.
var Platform = v1.Platform{OS: "linux", Architecture: runtime.GOARCH}

// Path is where Image puts the binary at file: images.AppDir/BASE, BASE its file name.
func Path(file string) string { return path.Join(images.AppDir, filepath.Base(file)) }

// Image is the recipe's image (images.Build.BinaryImage) of the static binaries at files, built
// already for Platform: each at Path(file), the first one the entrypoint.
func Image(t testing.TB, files ...string) v1.Image {
	t.Helper()
	if len(files) == 0 {
		t.Fatal("imagestest.Image: no binary")
	}
	img := empty.Image
	// Each binary becomes the entrypoint of the image it is added to: the first comes last.
	for i := len(files) - 1; i >= 0; i-- {
		var err error
		if img, err = (images.Build{}).BinaryImage(img, files[i], filepath.Base(files[i]), Platform); err != nil {
			t.Fatalf("imagestest: %v", err)
		}
	}
	return img
}

// Load puts img into the Docker engine at host under tag (e.g. lfp-swarm-lease-test:run) with
// `docker load` of a tarball, the way to give an engine an image without a registry.
func Load(t testing.TB, host, tag string, img v1.Image) {
	t.Helper()
	ref, err := name.NewTag(tag)
	if err != nil {
		t.Fatalf("imagestest: tag %q: %v", tag, err)
	}
	file := filepath.Join(t.TempDir(), "image.tar")
	if err := tarball.WriteToFile(file, ref, img); err != nil {
		t.Fatalf("imagestest: the tarball of %s: %v", tag, err)
	}
	if out, err := exec.Command("docker", "-H", host, "load", "--quiet", "--input", file).CombinedOutput(); err != nil {
		t.Fatalf("imagestest: docker load of %s: %v\n%s", tag, err, out)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
}

// Push writes img as ref (HOST:PORT/REPOSITORY:TAG) to a test registry, which it speaks to over
// plain HTTP: a loopback one, such as an in-process registry of go-containerregistry's
// pkg/registry, which Swarm pulls from without TLS settings.
func Push(t testing.TB, ref string, img v1.Image) {
	t.Helper()
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		t.Fatalf("imagestest: reference %q: %v", ref, err)
	}
	if err := remote.Write(tag, img); err != nil {
		t.Fatalf("imagestest: push %s: %v", ref, err)
	}
}
