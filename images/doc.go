// Package images is the one recipe of the product's container images, for local runs, tests,
// the release and the deployer alike:
//
//   - the controller image: the static lfp-swarm-lease binary alone, its entrypoint — the image
//     users base their own on;
//   - the demo image: the controller image plus the static demo binary.
//
// Both are built for every platform in [Platforms] (linux/amd64 and linux/arm64) on an empty
// base and pushed as one multi-platform index each, without a Docker daemon.
//
// Why go-containerregistry rather than ko: ko's default base image cannot be pulled on every
// machine that builds these images (CI and the deployer's hosts may have no outside registry),
// and an empty base needs no pull at all; with go-containerregistry the recipe is plain Go that
// a test runs against an in-process registry. The layout follows ko's conventions, so that the
// release's goreleaser `kos` entries can mirror it setting for setting: binaries in [AppDir]
// (ko's /ko-app), PATH ending in it, the binary the entrypoint, the controller index the demo
// image's base, the same OCI labels and the same ldflags ([Build.ldflags]). Everything a mirror
// has to copy is in recipe.go.
package images
