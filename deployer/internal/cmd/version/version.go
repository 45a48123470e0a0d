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
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
}

func versionRun(opts *Options) error {
	_, err := fmt.Fprintf(opts.IO.Out, "deployer %s (commit %s, built %s, %s, %s/%s)\n",
		buildinfo.Resolved(), buildinfo.Commit, buildinfo.Date, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}
