package images

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// binaryLayer is a layer holding one executable at AppDir/name, with the directory entries
// above it, all owned by root and dated at the epoch (reproducible digests).
func binaryLayer(file, name string) (v1.Layer, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("images: read the binary %s: %w", file, err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	dir := AppDir[1:] // tar paths are relative
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: epoch}); err != nil {
		return nil, err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: path.Join(dir, name), Mode: 0o755, Size: int64(len(data)), ModTime: epoch}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layer)), nil })
}

// BinaryImage is the recipe's image of a static binary that is built already (for platform p):
// base (empty.Image for an image FROM scratch) plus one layer with the binary at AppDir/name,
// the binary the entrypoint, PATH=AppDir, the OCI labels of b and b's Date as the creation
// time. Publish makes the controller image (on the empty base) and the demo image (on the
// controller's) with it; the tests make their images with it (images/imagestest). Only b's
// Version, Commit and Date are used.
func (b Build) BinaryImage(base v1.Image, file, name string, p v1.Platform) (v1.Image, error) {
	b = b.stampDefaults()
	layer, err := binaryLayer(file, name)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Variant = p.OS, p.Architecture, p.Variant
	cfg.Config.Entrypoint = []string{path.Join(AppDir, name)}
	cfg.Config.Cmd = nil
	cfg.Config.Env = []string{PathEnv}
	cfg.Config.Labels = b.labels(name)
	created, err := time.Parse(time.RFC3339, b.Date)
	if err != nil {
		return nil, fmt.Errorf("images: Build.Date %q: want RFC 3339 (2026-12-01T12:00:00Z): %w", b.Date, err)
	}
	cfg.Created = v1.Time{Time: created}
	return mutate.ConfigFile(img, cfg)
}

// platformImages builds pkg for every platform and puts it on the base image of that platform.
func (b Build) platformImages(ctx context.Context, pkg, name string, base func(v1.Platform) (v1.Image, error)) ([]v1.Image, error) {
	var out []v1.Image
	for _, p := range b.Platforms {
		file, err := b.binary(ctx, pkg, name, p)
		if err != nil {
			return nil, err
		}
		baseImg, err := base(p)
		if err != nil {
			return nil, err
		}
		img, err := b.BinaryImage(baseImg, file, name, p)
		if err != nil {
			return nil, err
		}
		out = append(out, img)
	}
	return out, nil
}

// index puts one image per platform into a multi-platform index.
func (b Build) index(imgs []v1.Image) v1.ImageIndex {
	idx := mutate.IndexMediaType(empty.Index, types.DockerManifestList)
	for i, img := range imgs {
		p := b.Platforms[i]
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return idx
}
