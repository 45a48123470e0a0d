// Package root is the release command's root, which wires in one command per package.
package root

import (
	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/release/internal/cmd/cut"
	"github.com/regbo/lfp-swarm-lease/release/internal/cmd/verifyversion"
)

// NewCmdRoot returns the release command with its subcommands.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	return cmdutil.NewRoot(f, &cobra.Command{
		Use:   "release",
		Short: "Release lfp-swarm-lease: bump, tag and push a version, check a tag against the version files",
		Example: `  release cut minor --dry-run
  release cut
  release verify-version v0.2.0`,
	}, cut.NewCmdCut(f, nil), verifyversion.NewCmdVerifyVersion(f, nil))
}
