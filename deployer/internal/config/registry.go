package config

import "strings"

// ValidateRegistry checks the settings of the images' registry.
func (c *Config) ValidateRegistry() error {
	if c.Registry == "" {
		return missing("registry", "it is where the images are")
	}
	if c.ImageNamespace == "" && c.Registry == "docker.io" {
		return missing("image_namespace", "Docker Hub images live under a user or organisation")
	}
	if (c.RegistryUsername == "") != (c.RegistryToken == "") {
		if c.RegistryUsername == "" {
			return missing("registry_username", "a registry token needs its user")
		}
		return missing("registry_token", "a registry user needs its token")
	}
	return nil
}

// Repository is where the images go: REGISTRY[/NAMESPACE].
func (c *Config) Repository() string {
	if c.ImageNamespace == "" {
		return c.Registry
	}
	return c.Registry + "/" + strings.Trim(c.ImageNamespace, "/")
}
