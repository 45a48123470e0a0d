package stackfile

import (
	"strconv"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
)

// Path is the stack file, relative to the repository root.
const Path = "deploy/stack.yml"

// Variables are the stack's variables that the deployer sets.
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

// Env is the stack's whole environment, sorted by name. Portainer replaces a stack's Env as a
// whole on update, so every variable is always sent.
func (v Variables) Env() []portainer.EnvVar {
	return []portainer.EnvVar{
		{Name: "CONTROLLER_REPLICAS", Value: strconv.Itoa(v.Replicas)},
		{Name: "DEMO_IMAGE", Value: v.DemoImage},
		{Name: "DEMO_PORT", Value: strconv.Itoa(v.DemoPort)},
		{Name: "DEMO_PORT_MODE", Value: v.DemoPortMode},
		{Name: "DOCKER_SOCKET", Value: v.DockerSocket},
		{Name: "ENDPOINT_MODE", Value: v.EndpointMode},
		{Name: "LEASE_TTL_MS", Value: strconv.Itoa(v.LeaseTTLMs)},
	}
}
