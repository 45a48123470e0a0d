package ownership

import (
	"errors"
	"fmt"
)

// ErrChanged is a stack whose owner or place changed between the plan and the write.
var ErrChanged = errors.New("ownership: the stack changed during the deploy")

// Unchanged checks that now, a second Find just before the write, found what f found: the
// same endpoint and Swarm, and the same stack record or still none. A build and push take
// minutes, in which someone may create, delete or move the stack; writing on the old plan
// would then create over their stack or update a record that is not the one planned.
func (f Finding) Unchanged(now Finding) error {
	switch {
	case f.Endpoint.ID != now.Endpoint.ID || f.SwarmID != now.SwarmID:
		return fmt.Errorf("%w: endpoint %s was id %d with Swarm %s and is now id %d with Swarm %s: nothing was deployed; check SWARM_LEASE_DEPLOY_ENDPOINT and deploy again", ErrChanged, f.Endpoint.Name, f.Endpoint.ID, f.SwarmID, now.Endpoint.ID, now.SwarmID)
	case f.Stack == nil && now.Stack != nil:
		return fmt.Errorf("%w: Portainer stack %s (id %d) was created meanwhile: nothing was deployed; deploy again to update it", ErrChanged, now.Stack.Name, now.Stack.ID)
	case f.Stack != nil && now.Stack == nil:
		return fmt.Errorf("%w: Portainer stack %s (id %d) was deleted meanwhile: nothing was deployed; deploy again to create it", ErrChanged, f.Stack.Name, f.Stack.ID)
	case f.Stack != nil && f.Stack.ID != now.Stack.ID:
		return fmt.Errorf("%w: Portainer stack %s was id %d and is now id %d: nothing was deployed; deploy again", ErrChanged, f.Stack.Name, f.Stack.ID, now.Stack.ID)
	}
	return nil
}
