package oneshot

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
)

// NewCmdRelease is `release FENCE`; runF, when set, replaces releaseRun (tests of parsing).
func NewCmdRelease(f *cmdutil.Factory, runF func(context.Context, *FenceOptions) error) *cobra.Command {
	return withFenceRunE(f, &cobra.Command{
		Use:     "release FENCE",
		Short:   "Give up the lease held with FENCE; exit 3 if this identity does not hold it",
		Example: `  lfp-swarm-lease release 1795970774065908 --namespace nightly-report --holder-id alice`,
	}, runF, releaseRun)
}

// releaseRun gives up the lease held with opts.Fence.
func releaseRun(ctx context.Context, opts *FenceOptions) error {
	return opts.withSession(ctx, func(ctx context.Context, s *cmdutil.Session) error {
		if err := s.Election.Release(ctx, opts.Fence); err != nil {
			return err
		}
		ns, store := s.Config.Namespace, s.Store.Describe()
		if opts.JSON {
			return cmdutil.WriteJSON(opts.IO.Out, map[string]any{"released": true, "namespace": ns, "fence": opts.Fence, "store": store})
		}
		fmt.Fprintf(opts.IO.Err, "released election %q (fence %d, %s)\n", ns, opts.Fence, store)
		return nil
	})
}
