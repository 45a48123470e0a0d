// Package root is the deployer's root command, which wires in one command per package.
package root

import (
	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmd/deploy"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmd/release"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmd/remove"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmd/verifyversion"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmd/version"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmdutil"
)

// NewCmdRoot returns the deployer command with its subcommands.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "deployer",
		Short: "Deploy the lfp-swarm-lease demo with Portainer, and release lfp-swarm-lease",
		Example: `  deployer deploy --dry-run
  deployer deploy
  deployer remove
  deployer release patch --dry-run`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetIn(f.IO.In)
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)
	cmd.AddCommand(
		deploy.NewCmdDeploy(f, nil),
		remove.NewCmdRemove(f, nil),
		release.NewCmdRelease(f, nil),
		verifyversion.NewCmdVerifyVersion(f, nil),
		version.NewCmdVersion(f, nil),
	)
	return cmd
}
