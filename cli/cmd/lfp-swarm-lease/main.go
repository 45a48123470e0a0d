// Command lfp-swarm-lease elects one leader among the replicas of a Docker Swarm service.
package main

import (
	"os"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmd"
)

func main() { os.Exit(cmd.Execute()) }
