// Command release releases lfp-swarm-lease: `release cut [patch|minor|major] [--dry-run]`
// bumps the one shared version, tags and pushes a release (what `bun run release` runs);
// `release verify-version TAG` checks that a tag names the version in the version files (what
// release CI runs first).
package main

import (
	"os"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/release/internal/cmd/root"
)

func main() {
	os.Exit(cmdutil.Main("release", root.NewCmdRoot, cmdutil.ExitCode))
}
