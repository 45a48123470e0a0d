package oneshot

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
)

// NewCmdInspect is `inspect`; runF, when set, replaces inspectRun (tests of parsing).
func NewCmdInspect(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	return withRunE(f, &cobra.Command{
		Use:   "inspect",
		Short: "Show the election: state, holder, node, task, fence, expiry",
		Long: `Show the election: its state (held, expired or vacant), holder, node, task, fence and times,
and the store it lives in. Needs a namespace, no holder identity; it never writes.`,
		Example: `  lfp-swarm-lease inspect --store file:///var/lib/lease --namespace nightly-report --json`,
		Args:    cobra.NoArgs,
	}, true, runF, inspectRun)
}

// inspectRun reads the election and prints it.
func inspectRun(ctx context.Context, opts *Options) error {
	return opts.withSession(ctx, func(ctx context.Context, s *cmdutil.Session) error {
		snap, err := s.Election.Inspect(ctx)
		if err != nil {
			return err
		}
		return printSnapshot(opts, snap, s.Store.Describe())
	})
}
