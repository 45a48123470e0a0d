package oneshot

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
)

// FenceOptions are the options of renew and release: the fence the holder got from
// try-acquire.
type FenceOptions struct {
	Options
	// Fence is the term's fence (the FENCE argument).
	Fence uint64
}

// NewCmdRenew is `renew FENCE`; runF, when set, replaces renewRun (tests of parsing).
func NewCmdRenew(f *cmdutil.Factory, runF func(context.Context, *FenceOptions) error) *cobra.Command {
	return withFenceRunE(f, &cobra.Command{
		Use:     "renew FENCE",
		Short:   "Extend the lease held with FENCE; exit 3 if this identity does not hold it",
		Example: `  lfp-swarm-lease renew 1795970774065908 --namespace nightly-report --holder-id alice`,
	}, runF, renewRun)
}

// renewRun extends the lease held with opts.Fence.
func renewRun(ctx context.Context, opts *FenceOptions) error {
	return opts.withSession(ctx, func(ctx context.Context, s *cmdutil.Session) error {
		g, err := s.Election.Renew(ctx, opts.Fence)
		if err != nil {
			return err
		}
		if opts.JSON {
			// inspect's object: the renewed term is held, and the store is named as everywhere.
			return cmdutil.WriteJSON(opts.IO.Out, snapshotJSON{StateJSON: cmdutil.ToStateJSON(g.Record, g.Version, true, true),
				Status: stateHeld, Store: s.Store.Describe()})
		}
		fmt.Fprintf(opts.IO.Out, "%d\n", g.Fence)
		fmt.Fprintf(opts.IO.Err, "renewed election %q: fence %d, expires %s (%s)\n", s.Config.Namespace, g.Fence, cmdutil.FormatTime(g.ExpiresAt), s.Store.Describe())
		return nil
	})
}
