// Package ownership finds the deployer's stack in Portainer and says whether it may touch it:
// only a Swarm stack record of the configured endpoint and its Swarm is the deployer's. A
// record of that name on another endpoint, or services of that stack namespace without any
// record (a stack deployed with `docker stack deploy`), belong to someone else and are
// refused, never adopted, updated or deleted.
package ownership

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
)

// ErrNotOurs is a stack name taken by a stack the deployer does not own.
var ErrNotOurs = errors.New("ownership: the stack is not ours")

// ErrNotManager is an endpoint whose engine gives no Swarm to deploy to: it is not a manager of
// a Swarm (or Portainer's answer about it made no sense).
var ErrNotManager = errors.New("ownership: the endpoint is not a Swarm manager")

// Finding is where the stack would live and whether it exists.
type Finding struct {
	// Endpoint is the configured Portainer environment.
	Endpoint portainer.Endpoint
	// SwarmID is the cluster ID of its Swarm.
	SwarmID string
	// Stack is the deployer's stack record, nil when there is none yet.
	Stack *portainer.Stack
}

// Find reads (and changes nothing) the endpoint, its Swarm, the Swarm's stack records and, when
// no record has the name, the services of that stack namespace. A name that belongs to
// someone else is an error matching ErrNotOurs that says whose it is.
func Find(ctx context.Context, c *portainer.Client, endpoint, name string) (Finding, error) {
	ep, err := c.Endpoint(ctx, endpoint)
	if err != nil {
		return Finding{}, err
	}
	swarmID, err := c.SwarmID(ctx, ep.ID)
	if err != nil {
		// Portainer's refusals and the network keep their own meaning; what is left is the
		// engine's answer that it has no Swarm to manage.
		var apiErr *portainer.APIError
		if errors.As(err, &apiErr) || errors.Is(err, portainer.ErrUnreachable) || ctx.Err() != nil {
			return Finding{}, err
		}
		return Finding{}, fmt.Errorf("%w: %w", ErrNotManager, err)
	}
	f := Finding{Endpoint: ep, SwarmID: swarmID}
	stacks, err := c.Stacks(ctx, swarmID, ep.ID)
	if err != nil {
		return Finding{}, err
	}
	for _, s := range stacks {
		if s.Name != name {
			continue
		}
		if s.Type != portainer.StackTypeSwarm && s.EndpointID == ep.ID {
			return Finding{}, fmt.Errorf("%w: Portainer stack %s (id %d) on endpoint %s is a %s stack, not a Swarm stack: the deployer neither replaces nor deletes it; remove it in Portainer yourself, or choose another SWARM_LEASE_DEPLOY_STACK_NAME", ErrNotOurs, s.Name, s.ID, ep.Name, stackKind(s.Type))
		}
		if s.Type == portainer.StackTypeSwarm && s.EndpointID == ep.ID && s.SwarmID != swarmID {
			return Finding{}, fmt.Errorf("%w: Portainer stack %s (id %d) on endpoint %s was deployed to another Swarm (cluster %s; the endpoint's Swarm is now %s): the deployer does not move it; remove it in Portainer yourself, or choose another SWARM_LEASE_DEPLOY_STACK_NAME", ErrNotOurs, s.Name, s.ID, ep.Name, s.SwarmID, swarmID)
		}
		if !portainer.Owned(s, swarmID, ep.ID) {
			return Finding{}, fmt.Errorf("%w: Portainer stack %s (id %d) belongs to endpoint %d, not to endpoint %s (id %d): set SWARM_LEASE_DEPLOY_ENDPOINT to that endpoint, or choose another SWARM_LEASE_DEPLOY_STACK_NAME", ErrNotOurs, s.Name, s.ID, s.EndpointID, ep.Name, ep.ID)
		}
		f.Stack = &s
		return f, nil
	}
	services, err := c.ExternalStackServices(ctx, ep.ID, name)
	if err != nil {
		return Finding{}, err
	}
	if len(services) > 0 {
		return Finding{}, fmt.Errorf("%w: stack %s on endpoint %s was deployed outside Portainer (services %s): the deployer neither adopts nor deletes it; remove it with `docker stack rm %s` yourself, or choose another SWARM_LEASE_DEPLOY_STACK_NAME", ErrNotOurs, name, ep.Name, strings.Join(services, ", "), name)
	}
	return f, nil
}

// stackKind names a stack record's Type for a message.
func stackKind(t int) string {
	switch t {
	case 2:
		return "Compose"
	case 3:
		return "Kubernetes"
	}
	return fmt.Sprintf("type %d", t)
}
