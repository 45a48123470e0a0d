// Package buildinfo is what the release build stamps into the programs (lfp-swarm-lease, the
// deployer) with the image recipe's ldflags (images.BuildInfoPackage; .goreleaser.yaml passes
// the same):
//
//	-X github.com/regbo/lfp-swarm-lease/images/buildinfo.Version=X.Y.Z
//	-X github.com/regbo/lfp-swarm-lease/images/buildinfo.Commit=SHA
//	-X github.com/regbo/lfp-swarm-lease/images/buildinfo.Date=RFC3339
//
// An unstamped build falls back to what the Go toolchain recorded — the module version of
// `go install …@vX.Y.Z`, the VCS revision and time of a build in a checkout — so that its
// version says what is known and nothing made up.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

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

// Line is the one line that program's `version` and --version print: "PROGRAM VERSION (commit
// SHA, built DATE, GO VERSION, OS/ARCH)", with "-" for a commit or date nobody recorded.
func (i Info) Line(program string) string {
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	return fmt.Sprintf("%s %s (commit %s, built %s, %s, %s/%s)", program, i.Version, dash(i.Commit), dash(i.Date),
		runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
