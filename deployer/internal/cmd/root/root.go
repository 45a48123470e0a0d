// Package root is the deployer's root command, which wires in one command per package.
package root

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/buildinfo"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmd/deploy"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmd/remove"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmd/version"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/config"
	"github.com/regbo/lfp-swarm-lease/settings"
)

// NewCmdRoot returns the deployer command with its subcommands.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "deployer",
		Short: "Deploy the lfp-swarm-lease demo with Portainer",
		Example: `  deployer deploy --dry-run
  deployer deploy
  deployer remove`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Set so that cobra adds --version; the template prints the whole version line.
		Version: buildinfo.Resolved(),
	}
	cmd.SetVersionTemplate(version.Line() + "\n")
	cmd.SetIn(f.IO.In)
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)
	// Inherited by every command: a flag the command does not have exits 2, as a setting to
	// fix does, answered with the closest flag it has.
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &UsageError{Err: flagError(c, err)} })
	cmd.AddCommand(
		deploy.NewCmdDeploy(f, nil),
		remove.NewCmdRemove(f, nil),
		version.NewCmdVersion(f, nil),
	)
	return cmd
}

// flagError says what to do about a flag the parser refused: an unknown one is answered with
// the closest flag the command has (--dryrun: --dry-run), and every refusal points at --help.
func flagError(cmd *cobra.Command, err error) error {
	if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		if closest := settings.Closest(name, names); closest != "" {
			return fmt.Errorf("unknown flag --%s: did you mean --%s? (%s --help lists the flags)", name, closest, cmd.CommandPath())
		}
	}
	return fmt.Errorf("%w (%s --help lists the flags)", err, cmd.CommandPath())
}

// UsageError is a command line the deployer does not take: an unknown flag, a flag's value of
// the wrong type.
type UsageError struct{ Err error }

// Error is Err's message.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *UsageError) Unwrap() error { return e.Err }

// ExitCode is the process's exit code for a command's error: 0 for none, 2 for a setting to
// fix or a command line the deployer does not take (a usage error, as in the CLI), 1 for
// anything that failed on the way.
func ExitCode(err error) int {
	var cerr *config.Error
	var usage *UsageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &cerr), errors.As(err, &usage), strings.HasPrefix(err.Error(), "unknown command "):
		// cobra's "unknown command" (a misspelt command, or an argument a command does not
		// take) has no hook of its own.
		return 2
	}
	return 1
}
