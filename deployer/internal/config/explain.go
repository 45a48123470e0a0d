package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/ownership"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
)

// ExplainPortainer adds to a Portainer error the settings to check, with where their values
// came from: the credentials on 401, the address when Portainer cannot be reached, the CA file
// when the TLS handshake failed.
func (c *Config) ExplainPortainer(err error) error {
	var unreachable *portainer.UnreachableError
	switch {
	case errors.Is(err, portainer.ErrUnauthorized):
		key := "portainer_api_key"
		if c.PortainerAPIKey == "" {
			key = "portainer_password"
		}
		return fmt.Errorf("%w: Portainer refused the credentials: check %s (from %s)", err, variable(key), c.Source(key))
	case errors.As(err, &unreachable):
		return c.explainUnreachable(err, unreachable)
	case errors.Is(err, portainer.ErrEndpointNotFound):
		// The client's error names the environment when it looked one up by name: say it once.
		which := ""
		if !strings.Contains(err.Error(), strconv.Quote(c.Endpoint)) {
			which = fmt.Sprintf(": Portainer has no environment %q", c.Endpoint)
		}
		return fmt.Errorf("%w%s: set SWARM_LEASE_DEPLOY_ENDPOINT (from %s) to the id or name of the environment that runs the Swarm", err, which, c.Source("endpoint"))
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

// explainUnreachable words u, within err, with the settings to check instead of the client's
// options: the URL, or on a failed TLS handshake the CA file.
func (c *Config) explainUnreachable(err error, u *portainer.UnreachableError) error {
	check := fmt.Sprintf("check %s (from %s), that Portainer is running and listening there, and that this machine can reach it",
		variable("portainer_url"), c.Source("portainer_url"))
	if u.TLS {
		ca := "not set: the system's CAs"
		if c.PortainerCAFile != "" {
			ca = "from " + c.Source("portainer_ca_file")
		}
		check = fmt.Sprintf("the TLS handshake failed: check %s (%s), which must hold the CA that signs Portainer's certificate, and that the host name of %s (from %s) is in the certificate",
			variable("portainer_ca_file"), ca, variable("portainer_url"), c.Source("portainer_url"))
	}
	explained := fmt.Sprintf("portainer: %s: %v at %s: %v; %s", u.Op, portainer.ErrUnreachable, u.Address, u.Cause, check)
	return &explainedError{msg: strings.Replace(err.Error(), u.Error(), explained, 1), err: err}
}

// explainedError is err with its message reworded.
type explainedError struct {
	msg string
	err error
}

func (e *explainedError) Error() string { return e.msg }
func (e *explainedError) Unwrap() error { return e.err }
