package config

import (
	"strings"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
)

// ValidatePortainer checks the settings that reach Portainer: its address, credentials and
// the stack's place.
func (c *Config) ValidatePortainer() error {
	if c.PortainerURL == "" {
		return missing("portainer_url", "it is Portainer's address")
	}
	if !strings.HasPrefix(c.PortainerURL, "https://") && !strings.HasPrefix(c.PortainerURL, "http://") {
		// The value is not quoted: a URL such as user:password@host would print a password.
		return c.invalid("portainer_url", "the value does not start with https:// or http://", "use https://HOST:9443 (or http://HOST:9000)")
	}
	if c.PortainerAPIKey == "" && c.PortainerUsername == "" {
		return missing("portainer_api_key", "Portainer needs an API key (preferred) or a username and password")
	}
	if c.PortainerAPIKey == "" && c.PortainerPassword == "" {
		return missing("portainer_password", "a username without a password cannot log in")
	}
	if c.Endpoint == "" {
		return missing("endpoint", "it is the Portainer environment that runs the Swarm (its id or name)")
	}
	if c.StackName == "" {
		return missing("stack_name", "it is the Portainer stack's name")
	}
	return nil
}

// PortainerOptions are the Portainer client's options. With an API key set, the username and
// password are not passed: Portainer refuses a request that carries both kinds of credentials,
// and the key is the preferred one.
func (c *Config) PortainerOptions() portainer.Options {
	o := portainer.Options{URL: c.PortainerURL, CAFile: c.PortainerCAFile, InsecureSkipVerify: c.PortainerInsecureSkipVerify}
	if c.PortainerAPIKey != "" {
		o.APIKey = c.PortainerAPIKey
	} else {
		o.Username, o.Password = c.PortainerUsername, c.PortainerPassword
	}
	return o
}
