// Package buildinfo holds the deployer's version, commit and build date, stamped by the release
// build:
//
//	-ldflags "-X github.com/regbo/lfp-swarm-lease/deployer/internal/buildinfo.Version=X.Y.Z
//	          -X github.com/regbo/lfp-swarm-lease/deployer/internal/buildinfo.Commit=SHA
//	          -X github.com/regbo/lfp-swarm-lease/deployer/internal/buildinfo.Date=RFC3339"
package buildinfo

import "runtime/debug"

// Version, Commit and Date are set by the release build's -ldflags; a plain `go build` leaves
// the defaults.
var (
	// Version is the release version, X.Y.Z.
	Version = "dev"
	// Commit is the commit the release was built from.
	Commit = "none"
	// Date is the build time, RFC 3339.
	Date = "unknown"
)

// Resolved returns Version, or, in a binary built by `go install …@vX.Y.Z` (which stamps no
// ldflags), the module version the go command recorded.
func Resolved() string {
	if Version != "dev" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return Version
}
