// Package version is `deployer version`: the stamped version, commit and build date.
package version

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/images/buildinfo"
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

func versionRun(opts *Options) error {
	_, err := fmt.Fprintln(opts.IO.Out, buildinfo.Get().Line("deployer"))
	return err
}
