package config

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/settings"
)

// Config are the deployer's settings, typed. The koanf tags are the settings' keys.
type Config struct {
	PortainerURL                string           `koanf:"portainer_url"`
	PortainerAPIKey             portainer.Secret `koanf:"portainer_api_key"`
	PortainerUsername           string           `koanf:"portainer_username"`
	PortainerPassword           portainer.Secret `koanf:"portainer_password"`
	PortainerCAFile             string           `koanf:"portainer_ca_file"`
	PortainerInsecureSkipVerify bool             `koanf:"portainer_insecure_skip_verify"`
	Endpoint                    string           `koanf:"endpoint"`
	StackName                   string           `koanf:"stack_name"`
	Registry                    string           `koanf:"registry"`
	ImageNamespace              string           `koanf:"image_namespace"`
	ImageTag                    string           `koanf:"image_tag"`
	RegistryUsername            string           `koanf:"registry_username"`
	RegistryToken               portainer.Secret `koanf:"registry_token"`
	LeaseTTLMs                  int              `koanf:"lease_ttl_ms"`
	Replicas                    int              `koanf:"replicas"`
	EndpointMode                string           `koanf:"endpoint_mode"`
	DemoPort                    int              `koanf:"demo_port"`
	DemoPortMode                string           `koanf:"demo_port_mode"`
	DockerSocket                string           `koanf:"docker_socket"`

	// values are the merged settings, with where each value came from, for errors found
	// later.
	values *settings.Values
}

// Input says where the settings are read from besides the process environment.
type Input struct {
	// Flags are the command's flags; the settings' flags among them are a layer (see
	// [AddFlags]).
	Flags *pflag.FlagSet
	// EnvFile is the .env file given with --env-file; it must exist. "" means Dir/.env when
	// that exists.
	EnvFile string
	// Dir is where the default .env is looked for: the repository root.
	Dir string
	// Registry: the command pushes or resolves images, so Connect checks the registry's
	// settings with Portainer's, and every missing setting is reported at once.
	Registry bool
}

// Load reads the settings from every layer, weakest first: the defaults, the .env file, the
// environment, the flags (each with the settings kernel). The warnings (unknown variables) go
// to the user. The error joins an *Error for every problem: a .env file that cannot be read or
// parsed, a value and its _FILE in one place, a _FILE that gives no value, a value not of its
// kind — then the Config is nil — or the stack's settings out of their range (validate).
func Load(in Input) (*Config, []string, error) {
	envFile, name := in.EnvFile, "--env-file"
	if envFile == "" {
		envFile, name = filepath.Join(in.Dir, ".env"), ".env"
	}
	layers := []settings.Layer{schema.Defaults()}
	var errs []error
	if _, err := os.Stat(envFile); err == nil || in.EnvFile != "" {
		dotEnv, err := schema.DotEnv(envFile)
		errs = append(errs, fromKernel(err, name))
		layers = append(layers, dotEnv)
	}
	env, err := schema.Environment(nil)
	errs = append(errs, fromKernel(err, name))
	flags, err := schema.Flags(in.Flags)
	errs = append(errs, err)
	layers = append(layers, env, flags)
	warnings := schema.Warnings(layers...)
	values, err := schema.Merge(layers...)
	errs = append(errs, fromKernel(err, name))
	if err := errors.Join(errs...); err != nil {
		// A setting that could not be read would only be reported missing below.
		return nil, warnings, err
	}
	cfg := &Config{values: values}
	if err := values.Unmarshal(cfg); err != nil {
		return nil, warnings, err
	}
	return cfg, warnings, cfg.validate()
}

// Source is where a setting's value came from ("" when it is unset).
func (c *Config) Source(key string) string {
	if c.values == nil || !c.values.IsSet(key) { // nil: a Config a test built
		return ""
	}
	return describe(c.values.Source(key))
}
