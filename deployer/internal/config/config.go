package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/ownership"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
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

	// sources are where each setting's value came from, for errors found later.
	sources map[string]string
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
}

// AddFlags adds a flag for every setting that is not a secret, and --env-file.
func AddFlags(fs *pflag.FlagSet, envFile *string) {
	fs.StringVar(envFile, "env-file", "", "read settings from this file (default: .env at the repository root, when it exists)")
	for _, s := range Settings {
		if s.Flag() == "" {
			continue
		}
		usage := s.Usage + " (" + s.Variable() + ")"
		// A flag's default only shows in --help: the flag layer keeps the flags the user set,
		// so a default never hides the environment or .env.
		switch s.Kind {
		case Switch:
			fs.Bool(s.Flag(), s.Default == "true", usage)
		case Number:
			n, err := strconv.Atoi(s.Default)
			if err != nil && s.Default != "" {
				panic("config: setting " + s.Key + " has a default that is not a number: " + s.Default)
			}
			fs.Int(s.Flag(), n, usage)
		default:
			fs.String(s.Flag(), s.Default, usage)
		}
	}
}

// Load reads the settings from every layer. The warnings (unknown variables) go to the user;
// an error is an *Error, or a .env that is not KEY=VALUE lines.
func Load(in Input) (*Config, []string, error) {
	envFile, explicit := in.EnvFile, in.EnvFile != ""
	if !explicit {
		envFile = filepath.Join(in.Dir, ".env")
	}
	var dotEnv map[string]variable
	if _, err := os.Stat(envFile); err == nil || explicit {
		name := "--env-file"
		if !explicit {
			name = ".env"
		}
		var err error
		if dotEnv, err = dotEnvVariables(envFile, name); err != nil {
			return nil, nil, err
		}
	}
	dotValues, dotFiles, warnings, err := splitVariables(dotEnv, filepath.Dir(envFile))
	if err != nil {
		return nil, nil, err
	}
	procVars, err := processVariables()
	if err != nil {
		return nil, nil, err
	}
	procValues, procFiles, procWarnings, err := splitVariables(procVars, "")
	if err != nil {
		return nil, nil, err
	}
	warnings = append(warnings, procWarnings...)
	flags, err := flagLayer(in.Flags)
	if err != nil {
		return nil, nil, err
	}
	defaults := layer{}
	for _, s := range Settings {
		if s.Default != "" {
			defaults[s.Key] = value{text: s.Default, source: "default"}
		}
	}
	// Weakest first: each layer overrides the ones before it.
	merged := layer{}
	for _, l := range []layer{defaults, dotFiles, dotValues, procFiles, procValues, flags} {
		for key, v := range l {
			merged[key] = v
		}
	}
	k := koanf.New(".")
	cfg := &Config{sources: map[string]string{}}
	for key, v := range merged {
		s, _ := setting(key)
		text, err := typed(s, v)
		if err != nil {
			return nil, nil, err
		}
		if err := k.Set(key, text); err != nil {
			return nil, nil, fmt.Errorf("config: %s: %w", s.Variable(), err)
		}
		cfg.sources[key] = v.source
	}
	if err := k.Unmarshal("", cfg); err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	slices.Sort(warnings)
	return cfg, warnings, cfg.validate()
}

// typed checks a value against its setting's kind and returns it in the form the decoder
// reads (a switch as true or false).
func typed(s Setting, v value) (any, error) {
	switch s.Kind {
	case Number:
		n, err := strconv.Atoi(strings.TrimSpace(v.text))
		if err != nil || n < 1 {
			return nil, &Error{Variable: s.Variable(), Source: v.source, Problem: fmt.Sprintf("%q is not a whole number of at least 1", v.text), Fix: "set a number such as " + s.Default}
		}
		return n, nil
	case Switch:
		switch strings.ToLower(strings.TrimSpace(v.text)) {
		case "true", "1", "yes", "on":
			return true, nil
		case "false", "0", "no", "off":
			return false, nil
		}
		return nil, &Error{Variable: s.Variable(), Source: v.source, Problem: fmt.Sprintf("%q is not true or false", v.text), Fix: "set true or false"}
	}
	return v.text, nil
}

// Source is where a setting's value came from ("" when it is unset).
func (c *Config) Source(key string) string { return c.sources[key] }

// invalid is an *Error for the setting key's current value.
func (c *Config) invalid(key, problem, fix string) error {
	s, _ := setting(key)
	return &Error{Variable: s.Variable(), Source: c.sources[key], Problem: problem, Fix: fix}
}

// missing is an *Error for an unset setting.
func missing(key, why string) error {
	s, _ := setting(key)
	how := "set it in .env or the environment"
	if s.Flag() != "" {
		how += ", or pass --" + s.Flag()
	} else {
		how += " (or " + s.FileVariable() + " to a file holding it)"
	}
	return &Error{Variable: s.Variable(), Problem: "not set; " + why, Fix: how}
}

// stackName is a name Portainer keeps as given: it lower-cases a stack's name and drops other
// characters, and a name it changed would not find its own record again.
var stackName = regexp.MustCompile(`^[a-z0-9][-_a-z0-9]*$`)

// validate checks what every command needs, whatever it does.
func (c *Config) validate() error {
	if !stackName.MatchString(c.StackName) {
		return c.invalid("stack_name", fmt.Sprintf("%q is not a stack name Portainer keeps as it is", c.StackName), "use lower-case letters, digits, - and _, starting with a letter or digit")
	}
	if !slices.Contains([]string{"vip", "dnsrr"}, c.EndpointMode) {
		return c.invalid("endpoint_mode", fmt.Sprintf("%q is not an endpoint mode", c.EndpointMode), "use vip or dnsrr")
	}
	if err := c.checkLeaseTiming(); err != nil {
		return err
	}
	if c.DemoPort > 65535 {
		return c.invalid("demo_port", fmt.Sprintf("%d is not a TCP port", c.DemoPort), "use a port from 1 to 65535, such as 8088")
	}
	if !slices.Contains([]string{"ingress", "host"}, c.DemoPortMode) {
		return c.invalid("demo_port_mode", fmt.Sprintf("%q is not a port mode", c.DemoPortMode), "use ingress or host")
	}
	if c.EndpointMode == "dnsrr" && c.DemoPortMode == "ingress" {
		return c.invalid("demo_port_mode", "ingress publishing needs endpoint_mode vip, and endpoint_mode is dnsrr", "set SWARM_LEASE_DEPLOY_DEMO_PORT_MODE=host, or use endpoint_mode vip")
	}
	return nil
}

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

// ExplainPortainer adds to a Portainer error the settings to check, with where their values
// came from: the credentials on 401, the address when Portainer cannot be reached.
func (c *Config) ExplainPortainer(err error) error {
	switch {
	case errors.Is(err, portainer.ErrUnauthorized):
		key := "portainer_api_key"
		if c.PortainerAPIKey == "" {
			key = "portainer_password"
		}
		s, _ := setting(key)
		return fmt.Errorf("%w: Portainer refused the credentials: check %s (from %s)", err, s.Variable(), c.sources[key])
	case errors.Is(err, portainer.ErrUnreachable):
		return fmt.Errorf("%w: check SWARM_LEASE_DEPLOY_PORTAINER_URL (from %s)", err, c.sources["portainer_url"])
	case errors.Is(err, portainer.ErrEndpointNotFound):
		return fmt.Errorf("%w: Portainer has no environment %q: set SWARM_LEASE_DEPLOY_ENDPOINT (from %s) to the id or name of the environment that runs the Swarm", err, c.Endpoint, c.sources["endpoint"])
	case errors.Is(err, portainer.ErrForbidden):
		key := "portainer_api_key"
		if c.PortainerAPIKey == "" {
			key = "portainer_username"
		}
		s, _ := setting(key)
		return fmt.Errorf("%w: the user of %s (from %s) may not do this on environment %q: give that user access to it in Portainer (Environments, Manage access) with a role that may manage stacks, or set SWARM_LEASE_DEPLOY_ENDPOINT (from %s) to one it may use", err, s.Variable(), c.sources[key], c.Endpoint, c.sources["endpoint"])
	case errors.Is(err, portainer.ErrConflict):
		return fmt.Errorf("%w: the stack name %s (SWARM_LEASE_DEPLOY_STACK_NAME, from %s) was taken meanwhile, by a concurrent deploy or another stack: deploy again (it then finds that stack and says whose it is), or choose another name", err, c.StackName, c.sources["stack_name"])
	case errors.Is(err, ownership.ErrNotManager):
		return fmt.Errorf("%w: set SWARM_LEASE_DEPLOY_ENDPOINT (from %s) to the environment of a Swarm manager", err, c.sources["endpoint"])
	}
	return err
}
