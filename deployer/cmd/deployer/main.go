// Command deployer deploys the demo with Portainer: `deployer deploy` builds, pushes and deploys
// the demo stack, `deployer remove` removes it; `deployer version` prints its own version.
package main

import (
	"os"

	"github.com/regbo/lfp-swarm-lease/deployer/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmd/root"
)

func main() {
	os.Exit(cmdutil.Main("deployer", root.NewCmdRoot, root.ExitCode))
}
