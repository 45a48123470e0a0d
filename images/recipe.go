package images

import (
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The settings a mirror of this recipe (the release's `kos`, the deployer) must copy.
const (
	// AppDir is where the binaries live in the images (ko's directory).
	AppDir = "/ko-app"
	// PathEnv is the images' PATH: `lfp-swarm-lease run -- demo worker` finds demo there.
	PathEnv = "PATH=" + AppDir
	// ControllerName is the controller binary and the last path element of its repository.
	ControllerName = "lfp-swarm-lease"
	// ControllerPackage is the controller's main package, relative to the repository root.
	ControllerPackage = "./cli/cmd/lfp-swarm-lease"
	// DemoName is the demo binary; its repository is ControllerName + "-demo".
	DemoName = "demo"
	// DemoPackage is the demo's main package, relative to the repository root.
	DemoPackage = "./demo/cmd/demo"
	// BuildInfoPackage holds the variables that -ldflags -X stamps with the release version,
	// commit and date (Version, Commit, Date), which `lfp-swarm-lease version` and `deployer version` show.
	BuildInfoPackage = "github.com/regbo/lfp-swarm-lease/images/buildinfo"
	// SourceURL is the images' org.opencontainers.image.source label.
	SourceURL = "https://github.com/regbo/lfp-swarm-lease"
)

// Platforms are the platforms of every image index.
var Platforms = []v1.Platform{
	{OS: "linux", Architecture: "amd64"},
	{OS: "linux", Architecture: "arm64"},
}

// labels are the OCI labels of both images.
func (b Build) labels(title string) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":    title,
		"org.opencontainers.image.source":   SourceURL,
		"org.opencontainers.image.version":  b.Version,
		"org.opencontainers.image.revision": b.Commit,
		"org.opencontainers.image.created":  b.Date,
	}
}

// ldflags strip the symbol tables and stamp the version, commit and date, as the release
// builds do.
func (b Build) ldflags() string {
	return "-s -w -X " + BuildInfoPackage + ".Version=" + b.Version +
		" -X " + BuildInfoPackage + ".Commit=" + b.Commit + " -X " + BuildInfoPackage + ".Date=" + b.Date
}

// ParsePlatforms reads a comma-separated list such as "linux/amd64,linux/arm64".
func ParsePlatforms(list string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, p := range strings.Split(list, ",") {
		plat, err := v1.ParsePlatform(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("images: platform %q: want OS/ARCH, e.g. linux/arm64: %w", p, err)
		}
		out = append(out, *plat)
	}
	return out, nil
}
