package runcmd

import (
	"context"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// leaseEngine wins terms of the Swarm, etcd or file lease: a lease.Contender, which logs the
// term's transitions itself (acquired, lost, term ended, released).
type leaseEngine struct{ contender *lease.Contender }

// Contend implements engine.
func (c leaseEngine) Contend(ctx context.Context, lead func(wonTerm) error) error {
	return c.contender.Run(ctx, func(t *lease.Term) error {
		g := t.Grant
		return lead(wonTerm{
			Fence: g.Fence, Holder: lease.Identity{HolderID: g.HolderID, NodeID: g.NodeID, TaskID: g.TaskID}, Namespace: g.Namespace,
			Done: t.Done(), Cause: t.Cause, Remaining: t.Remaining, Renewed: t.Renewed(),
		})
	})
}
