package config

import (
	"fmt"
	"io"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
)

// Connect is what every Portainer command starts with: it loads the settings, writes the
// warnings to warn, checks the Portainer settings and returns a client, which has sent nothing
// yet.
func Connect(in Input, warn io.Writer) (*Config, *portainer.Client, error) {
	cfg, warnings, err := Load(in)
	for _, w := range warnings {
		fmt.Fprintln(warn, w)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := cfg.ValidatePortainer(); err != nil {
		return nil, nil, err
	}
	client, err := portainer.New(cfg.PortainerOptions())
	if err != nil {
		return nil, nil, err
	}
	return cfg, client, nil
}
