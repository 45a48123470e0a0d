package images

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// ErrBuild is a failure to build the images (go build, or assembling the layers): a problem of
// the source or the machine, not of the registry.
var ErrBuild = errors.New("images: build")

// Build says what to build: the repository's source at Root, stamped with Version, Commit and
// Date (RFC 3339; the images' creation time, so equal inputs give equal digests).
type Build struct {
	// Root is the repository root (the go.work directory).
	Root string
	// Version is the version stamped into the binary and the labels (e.g. 0.1.0, or dev).
	Version string
	// Commit is the source revision (a git hash) for the labels.
	Commit string
	// Date is the build date, RFC 3339 (default 1970-01-01T00:00:00Z: reproducible digests).
	Date string
	// Platforms are the platforms to build (default Platforms).
	Platforms []v1.Platform
	// WorkDir receives the binaries (default a temporary directory, removed by Publish).
	WorkDir string
	// Env is go build's environment (default os.Environ()), to which the build adds its
	// platform. A caller that holds secrets in its environment passes it without them.
	Env []string
}

func (b Build) withDefaults() (Build, error) {
	if b.Root == "" {
		return b, errors.New("images: Build.Root is empty: set it to the repository root")
	}
	if _, err := os.Stat(filepath.Join(b.Root, "go.work")); err != nil {
		return b, fmt.Errorf("images: Build.Root %s is not the repository root (no go.work): %w", b.Root, err)
	}
	if len(b.Platforms) == 0 {
		b.Platforms = Platforms
	}
	return b.stampDefaults(), nil
}

// stampDefaults is b with the default Version (dev) and Date (the epoch) when they are empty.
func (b Build) stampDefaults() Build {
	b.Version = cmp.Or(b.Version, "dev")
	b.Date = cmp.Or(b.Date, "1970-01-01T00:00:00Z")
	return b
}

// binary builds one static binary for p into WorkDir and returns its path.
func (b Build) binary(ctx context.Context, pkg, name string, p v1.Platform) (string, error) {
	out := filepath.Join(b.WorkDir, p.OS+"-"+p.Architecture, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", b.ldflags(), "-o", out, pkg)
	cmd.Dir = b.Root
	cmd.Env = append(b.environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture, "GOFLAGS=-buildvcs=false")
	output := &tailBuffer{limit: maxBuildOutput}
	cmd.Stdout, cmd.Stderr = output, output
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("images: go build %s for %s/%s: %w\n%s", pkg, p.OS, p.Architecture, err, strings.TrimSpace(output.String()))
	}
	return out, nil
}

// environ is Env, or the process's environment when Env is nil.
func (b Build) environ() []string {
	if b.Env == nil {
		return os.Environ()
	}
	return slices.Clone(b.Env)
}
