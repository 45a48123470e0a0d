package runcmd

import (
	"context"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// leaseContender wins terms of the Swarm or file lease: a lease.Campaign, which logs the
// term's transitions itself (acquired, lost, term ended, released).
type leaseContender struct{ campaign *lease.Campaign }

// Contend implements Contender.
func (c leaseContender) Contend(ctx context.Context, lead func(Term) error) error {
	return c.campaign.Run(ctx, func(t *lease.Term) error {
		g := t.Grant
		return lead(Term{
			Fence: g.Fence, Holder: lease.Identity{HolderID: g.HolderID, NodeID: g.NodeID, TaskID: g.TaskID}, Election: g.Namespace,
			Done: t.Done(), Cause: t.Cause, Remaining: t.Remaining, Renewed: t.Renewed(),
		})
	})
}
