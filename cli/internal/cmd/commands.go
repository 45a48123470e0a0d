package cmd

import (
	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"

	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version is the release version, set at build time with
// -ldflags "-X github.com/regbo/lfp-swarm-lease/cli/internal/cmd.Version=X.Y.Z".
var Version = "dev"

func (a *App) newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := Version
			if info, ok := debug.ReadBuildInfo(); ok && v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
				v = info.Main.Version
			}
			if a.JSON {
				return cmdutil.WriteJSON(a.Out, map[string]string{"version": v, "go": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH})
			}
			fmt.Fprintf(a.Out, "lfp-swarm-lease %s (%s, %s/%s)\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
