// Command deployer deploys the demo with Portainer: `deployer deploy` builds, pushes and deploys
// the demo stack, `deployer remove` removes it; `deployer version` prints its own version.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmd/root"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/gitrun"
)

func main() {
	os.Exit(run())
}

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := &cmdutil.Factory{
		IO:  cmdutil.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr},
		Now: time.Now,
	}
	// Outside a work tree only the commands that need the repository fail (NeedRepository):
	// help, version and remove work anywhere.
	if dir, err := repositoryRoot(ctx); err != nil {
		f.RepoErr = err
	} else {
		f.Dir, f.Git = dir, gitrun.Exec{Dir: dir}
	}
	if err := root.NewCmdRoot(f).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "deployer:", err)
		return root.ExitCode(err)
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
