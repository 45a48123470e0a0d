package config

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/settings"
)

// Connect is what every Portainer command starts with: it loads the settings, writes the
// warnings to warn, checks the Portainer settings (and the registry's, with in.Registry) and
// returns a client, which has sent nothing yet. Every problem of the settings is reported at
// once, each an *Error.
func Connect(in Input, warn io.Writer) (*Config, *portainer.Client, error) {
	cfg, warnings, err := Load(in)
	for _, w := range warnings {
		fmt.Fprintln(warn, "warning:", w)
	}
	if cfg == nil {
		return nil, nil, err
	}
	errs := []error{err, cfg.ValidatePortainer()}
	if in.Registry {
		errs = append(errs, cfg.ValidateRegistry())
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	if w := cfg.cleartextWarning(); w != "" {
		fmt.Fprintln(warn, w)
	}
	client, err := portainer.New(cfg.PortainerOptions())
	var refused *settings.FileError
	if errors.As(err, &refused) {
		// The CA bundle is the only file the client reads (again, after ValidatePortainer):
		// name the setting that named it.
		return nil, nil, refusedFile(variable("portainer_ca_file"), cfg.Source("portainer_ca_file"), refused)
	}
	if err != nil {
		return nil, nil, err
	}
	return cfg, client, nil
}

// cleartextWarning warns about an http:// Portainer URL that is not loopback: the API key or
// password would cross the network in clear text. It is a warning, not an error, because a
// private network may be trusted; "" when there is nothing to warn about.
func (c *Config) cleartextWarning() string {
	if !strings.HasPrefix(c.PortainerURL, "http://") {
		return ""
	}
	u, err := url.Parse(c.PortainerURL)
	if err != nil {
		return ""
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return ""
	}
	return fmt.Sprintf("warning: SWARM_LEASE_DEPLOY_PORTAINER_URL (from %s) is http:// to %s, not loopback: Portainer's credentials travel in clear text; use https://%s:9443", c.Source("portainer_url"), host, host)
}
