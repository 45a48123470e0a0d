package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/deployer/gitrun"
	"github.com/regbo/lfp-swarm-lease/settings"
)

// Main runs one of the repository's tools (the deployer, release): the root command newRoot
// builds runs with the process's streams, in the git work tree around the working directory,
// until SIGINT or SIGTERM. It returns the exit code: 0, or exitCode of the error, which it
// prints after the tool's name.
func Main(name string, newRoot func(*Factory) *cobra.Command, exitCode func(error) int) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := &Factory{
		IO:  IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr},
		Now: time.Now,
	}
	// Outside a work tree only the commands that need the repository fail (NeedRepository):
	// help, and the commands that do not need it, work anywhere.
	if dir, err := repositoryRoot(ctx); err != nil {
		f.RepoErr = err
	} else {
		f.Dir, f.Git = dir, gitrun.Exec{Dir: dir}
	}
	if err := newRoot(f).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return exitCode(err)
	}
	return 0
}

// repositoryRoot is the top of the git work tree around the current directory, so the
// commands work from any directory of the repository (bun runs scripts from the root).
func repositoryRoot(ctx context.Context) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return gitrun.Exec{Dir: wd}.Git(ctx, "rev-parse", "--show-toplevel")
}

// NewRoot wires root, a tool's root command, to f's streams and adds its commands. Errors are
// returned, not printed (Main prints them once), without the usage; a flag a command does not
// have, or a flag's value of the wrong type, is a *UsageError whatever the command.
func NewRoot(f *Factory, root *cobra.Command, commands ...*cobra.Command) *cobra.Command {
	root.SilenceUsage, root.SilenceErrors = true, true
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	// Inherited by every command: a flag the command does not have exits 2, answered with the
	// closest flag it has.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &UsageError{Err: flagError(c, err)} })
	root.AddCommand(commands...)
	return root
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

// UsageError is a command line the tool does not take: an unknown flag, a flag's value of the
// wrong type.
type UsageError struct{ Err error }

// Error is Err's message.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *UsageError) Unwrap() error { return e.Err }

// ExitCode is the process's exit code for a command's error: 0 for none, 2 for a command line
// the tool does not take, 1 for anything that failed on the way.
func ExitCode(err error) int {
	var usage *UsageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &usage), strings.HasPrefix(err.Error(), "unknown command "),
		strings.HasPrefix(err.Error(), "accepts "), strings.HasPrefix(err.Error(), "requires "):
		// cobra's "unknown command" (a misspelt command, or an argument a command does not
		// take) and its argument counts have no hook of their own.
		return 2
	}
	return 1
}
