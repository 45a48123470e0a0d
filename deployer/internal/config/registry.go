package config

import (
	"errors"
	"strings"
)

// ValidateRegistry checks the settings of the images' registry; every problem is reported,
// not only the first.
func (c *Config) ValidateRegistry() error {
	var errs []error
	if c.Registry == "" {
		errs = append(errs, missing("registry", "it is where the images are"))
	}
	if c.ImageNamespace == "" && c.Registry == "docker.io" {
		errs = append(errs, missing("image_namespace", "Docker Hub images live under a user or organisation"))
	}
	if c.RegistryUsername == "" && c.RegistryToken != "" {
		errs = append(errs, missing("registry_username", "a registry token needs its user"))
	}
	if c.RegistryUsername != "" && c.RegistryToken == "" {
		errs = append(errs, missing("registry_token", "a registry user needs its token"))
	}
	return errors.Join(errs...)
}

// Repository is where the images go: REGISTRY[/NAMESPACE].
func (c *Config) Repository() string {
	if c.ImageNamespace == "" {
		return c.Registry
	}
	return c.Registry + "/" + strings.Trim(c.ImageNamespace, "/")
}
