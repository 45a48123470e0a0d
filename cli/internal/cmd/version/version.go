// Package version is the `version` command: the version, commit and build date the release
// build stamped (package buildinfo), the Go version and the platform.
package version

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/images/buildinfo"
)

// Options are the version command's.
type Options struct {
	// IO receives the version on Out.
	IO cmdutil.IOStreams
	// JSON prints one JSON object.
	JSON bool
	// Info returns the build's information (default buildinfo.Get).
	Info func() buildinfo.Info
}

// versionJSON is the version command's JSON output.
type versionJSON struct {
	buildinfo.Info
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// NewCmdVersion is `version`; runF, when set, replaces versionRun (tests of parsing).
func NewCmdVersion(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the version, commit and build date",
		Example: "  lfp-swarm-lease version --json",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			opts := &Options{IO: f.IOStreams, JSON: f.JSON, Info: buildinfo.Get}
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
	f.AddJSONFlag(cmd.Flags())
	return cmd
}

// versionRun prints the version.
func versionRun(opts *Options) error {
	info := opts.Info()
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, versionJSON{Info: info, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH})
	}
	_, err := fmt.Fprintln(opts.IO.Out, info.Line("lfp-swarm-lease"))
	return err
}
