// Package root is the deployer's root command, which wires in one command per package.
package root

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmd/deploy"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmd/remove"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmd/version"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/config"
	"github.com/regbo/lfp-swarm-lease/images/buildinfo"
)

// NewCmdRoot returns the deployer command with its subcommands.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewRoot(f, &cobra.Command{
		Use:   "deployer",
		Short: "Deploy the lfp-swarm-lease demo with Portainer",
		Example: `  deployer deploy --dry-run
  deployer deploy
  deployer remove`,
		// Set so that cobra adds --version; the template prints the whole version line.
		Version: buildinfo.Get().Version,
	}, deploy.NewCmdDeploy(f, nil), remove.NewCmdRemove(f, nil), version.NewCmdVersion(f, nil))
	cmd.SetVersionTemplate(buildinfo.Get().Line("deployer") + "\n")
	return cmd
}

// ExitCode is the process's exit code for a command's error: 2 for a setting to fix too (as in
// the CLI), otherwise cmdutil.ExitCode's.
func ExitCode(err error) int {
	if cerr := (*config.Error)(nil); errors.As(err, &cerr) {
		return 2
	}
	return cmdutil.ExitCode(err)
}
