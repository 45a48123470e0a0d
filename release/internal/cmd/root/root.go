// Package root is the release command's root, which wires in one command per package.
package root

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/release/internal/cmd/cut"
	"github.com/regbo/lfp-swarm-lease/release/internal/cmd/verifyversion"
	"github.com/regbo/lfp-swarm-lease/release/internal/cmdutil"
)

// NewCmdRoot returns the release command with its subcommands.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "release",
		Short: "Release lfp-swarm-lease: bump, tag and push a version, check a tag against the version files",
		Example: `  release cut minor --dry-run
  release cut
  release verify-version v0.2.0`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetIn(f.IO.In)
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)
	// Inherited by every command: a flag the command does not have exits 2.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	cmd.AddCommand(
		cut.NewCmdCut(f, nil),
		verifyversion.NewCmdVerifyVersion(f, nil),
	)
	return cmd
}

// UsageError is a command line the release command does not take: an unknown flag, a flag's
// value of the wrong type.
type UsageError struct{ Err error }

// Error is Err's message.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *UsageError) Unwrap() error { return e.Err }

// ExitCode is the process's exit code for a command's error: 0 for none, 2 for a command line
// the release command does not take, 1 for anything that failed on the way.
func ExitCode(err error) int {
	var usage *UsageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &usage), strings.HasPrefix(err.Error(), "unknown command "),
		strings.HasPrefix(err.Error(), "accepts "), strings.HasPrefix(err.Error(), "requires "):
		// cobra's "unknown command" and its argument counts have no hook of their own.
		return 2
	}
	return 1
}
