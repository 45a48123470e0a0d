// Command release releases lfp-swarm-lease: `release cut [patch|minor|major] [--dry-run]`
// bumps the one shared version, tags and pushes a release (what `bun run release` runs);
// `release verify-version TAG` checks that a tag names the version in the version files (what
// release CI runs first).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/regbo/lfp-swarm-lease/release/internal/cmd/root"
	"github.com/regbo/lfp-swarm-lease/release/internal/cmdutil"
	"github.com/regbo/lfp-swarm-lease/release/internal/gitrun"
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
	// Outside a work tree the commands fail with NeedRepository's message; help works anywhere.
	if dir, err := repositoryRoot(ctx); err != nil {
		f.RepoErr = err
	} else {
		f.Dir, f.Git = dir, gitrun.Exec{Dir: dir}
	}
	if err := root.NewCmdRoot(f).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
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
