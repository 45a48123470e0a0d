package oneshot

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
)

// NewCmdDestroy is `destroy`; runF, when set, replaces destroyRun (tests of parsing).
func NewCmdDestroy(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	return withRunE(f, &cobra.Command{
		Use:   "destroy",
		Short: "Remove the election (the Swarm anchor service); a holder loses its lease",
		Long: `Remove the election: the anchor service on Swarm, the election's file on the file store.
A current holder's next renewal fails. A later acquisition re-creates the election with a fence
counter that starts at the current time in microseconds, above every fence issued before.
Needs a namespace, no holder identity.`,
		Example: `  lfp-swarm-lease destroy --namespace nightly-report`,
		Args:    cobra.NoArgs,
	}, true, runF, destroyRun)
}

// destroyRun removes the election.
func destroyRun(ctx context.Context, opts *Options) error {
	return opts.withSession(ctx, func(ctx context.Context, s *cmdutil.Session) error {
		if err := s.Election.Destroy(ctx); err != nil {
			return err
		}
		ns, store := s.Config.Namespace, s.Store.Describe()
		if opts.JSON {
			return cmdutil.WriteJSON(opts.IO.Out, map[string]any{"destroyed": true, "namespace": ns, "store": store})
		}
		fmt.Fprintf(opts.IO.Err, "destroyed election %q (%s)\n", ns, store)
		return nil
	})
}
