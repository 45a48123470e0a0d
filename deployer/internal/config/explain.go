package config

import (
	"errors"
	"fmt"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/ownership"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
)

// ExplainPortainer adds to a Portainer error the settings to check, with where their values
// came from: the credentials on 401, the address when Portainer cannot be reached.
func (c *Config) ExplainPortainer(err error) error {
	switch {
	case errors.Is(err, portainer.ErrUnauthorized):
		key := "portainer_api_key"
		if c.PortainerAPIKey == "" {
			key = "portainer_password"
		}
		return fmt.Errorf("%w: Portainer refused the credentials: check %s (from %s)", err, variable(key), c.Source(key))
	case errors.Is(err, portainer.ErrUnreachable):
		return fmt.Errorf("%w: check SWARM_LEASE_DEPLOY_PORTAINER_URL (from %s)", err, c.Source("portainer_url"))
	case errors.Is(err, portainer.ErrEndpointNotFound):
		return fmt.Errorf("%w: Portainer has no environment %q: set SWARM_LEASE_DEPLOY_ENDPOINT (from %s) to the id or name of the environment that runs the Swarm", err, c.Endpoint, c.Source("endpoint"))
	case errors.Is(err, portainer.ErrForbidden):
		key := "portainer_api_key"
		if c.PortainerAPIKey == "" {
			key = "portainer_username"
		}
		return fmt.Errorf("%w: the user of %s (from %s) may not do this on environment %q: give that user access to it in Portainer (Environments, Manage access) with a role that may manage stacks, or set SWARM_LEASE_DEPLOY_ENDPOINT (from %s) to one it may use", err, variable(key), c.Source(key), c.Endpoint, c.Source("endpoint"))
	case errors.Is(err, portainer.ErrConflict):
		return fmt.Errorf("%w: the stack name %s (SWARM_LEASE_DEPLOY_STACK_NAME, from %s) was taken meanwhile, by a concurrent deploy or another stack: deploy again (it then finds that stack and says whose it is), or choose another name", err, c.StackName, c.Source("stack_name"))
	case errors.Is(err, ownership.ErrNotManager):
		return fmt.Errorf("%w: set SWARM_LEASE_DEPLOY_ENDPOINT (from %s) to the environment of a Swarm manager", err, c.Source("endpoint"))
	}
	return err
}
