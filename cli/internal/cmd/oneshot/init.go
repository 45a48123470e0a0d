package oneshot

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
)

// NewCmdInit is `init`; runF, when set, replaces initRun (tests of parsing).
func NewCmdInit(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	return withRunE(f, &cobra.Command{
		Use:   "init",
		Short: "Create the election's anchor if it does not exist (optional; idempotent)",
		Long: `Create the election's record — the anchor service on Swarm, its file on the file store — if
there is none, and print it. Needs a namespace, no holder identity.`,
		Example: `  lfp-swarm-lease init --store file:///var/lib/lease --namespace nightly-report`,
		Args:    cobra.NoArgs,
	}, true, runF, initRun)
}

// initRun creates the election's record if missing and prints it.
func initRun(ctx context.Context, opts *Options) error {
	return opts.withSession(ctx, func(ctx context.Context, s *cmdutil.Session) error {
		snap, err := s.Election.Init(ctx)
		if err != nil {
			return err
		}
		return printSnapshot(opts, snap, s.Store.Describe())
	})
}
