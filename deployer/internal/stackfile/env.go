package stackfile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/compose-spec/compose-go/v2/template"
	"go.yaml.in/yaml/v3"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
)

// Path is the stack file, relative to the repository root.
const Path = "deploy/stack.yml"

// Variables are the stack's variables that the deployer sets from its settings.
type Variables struct {
	// DemoImage is the demo image pinned to a digest (repo@sha256:…), used by both services.
	DemoImage string
	// LeaseTTLMs is the controllers' lease TTL.
	LeaseTTLMs int
	// Replicas is the number of controllers.
	Replicas int
	// EndpointMode is vip or dnsrr.
	EndpointMode string
	// DemoPort is the page's published port.
	DemoPort int
	// DemoPortMode is ingress or host.
	DemoPortMode string
	// DockerSocket is the managers' Docker socket, which the controllers mount.
	DockerSocket string
}

// set are the variables the settings give, by name.
func (v Variables) set() map[string]string {
	return map[string]string{
		"CONTROLLER_REPLICAS": strconv.Itoa(v.Replicas),
		"DEMO_IMAGE":          v.DemoImage,
		"DEMO_PORT":           strconv.Itoa(v.DemoPort),
		"DEMO_PORT_MODE":      v.DemoPortMode,
		"DOCKER_SOCKET":       v.DockerSocket,
		"ENDPOINT_MODE":       v.EndpointMode,
		"LEASE_TTL_MS":        strconv.Itoa(v.LeaseTTLMs),
	}
}

// Env is the stack's whole environment, sorted by name: every variable the stack file content
// uses, each with the settings' value when the deployer sets it and the file's own default
// otherwise. Every variable is sent because Portainer runs `docker stack deploy` with its own
// process environment plus the stack's Env: a variable left out would take whatever
// Portainer's environment holds. And Portainer replaces a stack's Env as a whole on update.
// The list comes from the file, so that it cannot drift from it; a variable the file uses
// without a default and that no setting gives is an error.
func (v Variables) Env(content []byte) ([]portainer.EnvVar, error) {
	used, err := FileVariables(content)
	if err != nil {
		return nil, err
	}
	set := v.set()
	env := make([]portainer.EnvVar, 0, len(used)+len(set))
	for name, value := range set {
		env = append(env, portainer.EnvVar{Name: name, Value: value})
	}
	for name, u := range used {
		if _, ok := set[name]; ok {
			continue
		}
		if u.DefaultValue == "" {
			return nil, fmt.Errorf("stack file %s uses ${%s} without a default, and the deployer has no setting for it: give it a default (${%s:-VALUE})", Path, name, name)
		}
		env = append(env, portainer.EnvVar{Name: name, Value: u.DefaultValue})
	}
	slices.SortFunc(env, func(a, b portainer.EnvVar) int { return strings.Compare(a.Name, b.Name) })
	return env, nil
}

// FileVariables are the variables the stack file content uses (${NAME}, ${NAME:-default}, …),
// by name, with their defaults.
func FileVariables(content []byte) (map[string]template.Variable, error) {
	var dict map[string]any
	if err := yaml.Unmarshal(content, &dict); err != nil {
		return nil, fmt.Errorf("stack file %s is not YAML: %w", Path, err)
	}
	return template.ExtractVariables(dict, template.DefaultPattern), nil
}
