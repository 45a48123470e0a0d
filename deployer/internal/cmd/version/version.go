// Package version is `deployer version`: the stamped version, commit and build date.
package version

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/buildinfo"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmdutil"
)

// Options are the inputs of `deployer version`.
type Options struct {
	// IO receives the version line.
	IO cmdutil.IOStreams
}

// NewCmdVersion returns the version command. runF, when set, receives the options instead of
// versionRun (tests of flag parsing).
func NewCmdVersion(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Example: `  deployer version
  deployer --version`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
}

// Line is the version line that both `deployer version` and `deployer --version` print.
func Line() string {
	return fmt.Sprintf("deployer %s (commit %s, built %s, %s, %s/%s)",
		buildinfo.Resolved(), buildinfo.Commit, buildinfo.Date, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func versionRun(opts *Options) error {
	_, err := fmt.Fprintln(opts.IO.Out, Line())
	return err
}
