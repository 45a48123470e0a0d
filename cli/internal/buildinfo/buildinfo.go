// Package buildinfo is what the release build stamps into the binary:
//
//	-ldflags "-X github.com/regbo/lfp-swarm-lease/cli/internal/buildinfo.Version=X.Y.Z
//	          -X github.com/regbo/lfp-swarm-lease/cli/internal/buildinfo.Commit=SHA
//	          -X github.com/regbo/lfp-swarm-lease/cli/internal/buildinfo.Date=RFC3339"
//
// Unstamped builds fall back to what the Go toolchain recorded (module version, VCS revision
// and time), so that `go install …@vX.Y.Z` still reports its version.
package buildinfo

import "runtime/debug"

// Set by the release build; see the package comment.
var (
	// Version is the release version ("dev" when not stamped).
	Version = "dev"
	// Commit is the source revision ("" when not stamped).
	Commit = ""
	// Date is the build time, RFC 3339 ("" when not stamped).
	Date = ""
)

// Info is the build's version, commit and date.
type Info struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Date    string `json:"date"`
}

// Get returns the stamped values, completed from the toolchain's build information.
func Get() Info {
	info := Info{Version: Version, Commit: Commit, Date: Date}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	if info.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		info.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && info.Commit == "":
			info.Commit = s.Value
		case s.Key == "vcs.time" && info.Date == "":
			info.Date = s.Value
		}
	}
	return info
}
