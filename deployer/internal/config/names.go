package config

import (
	"github.com/regbo/lfp-swarm-lease/deployer/internal/settingtable"
	"github.com/regbo/lfp-swarm-lease/settings"
)

// Prefix is the prefix of every setting's variable, SWARM_LEASE_DEPLOY_.
const Prefix = settingtable.Prefix

// schema is the deployer's table of settings.
var schema = settingtable.Schema

// variable is key's variable, e.g. SWARM_LEASE_DEPLOY_PORTAINER_URL.
func variable(key string) string { return schema.Variable(key) }

// flagName is the flag of s without its dashes, or "" for a secret: a secret on a command line
// would be visible to every user of the machine in the process list.
func flagName(s settings.Setting) string {
	if s.Kind == settings.Secret {
		return ""
	}
	return settings.FlagName(s.Key)
}

// describe says where a value came from, e.g. "flag --replicas", "variable
// SWARM_LEASE_DEPLOY_REPLICAS", "/repo/.env line 4 (SWARM_LEASE_DEPLOY_REPLICAS)", "file
// /run/secrets/key named by variable SWARM_LEASE_DEPLOY_PORTAINER_API_KEY_FILE", "default": the
// kernel's provenance, a variable of the environment called a variable.
func describe(src settings.Source) string {
	if src.Kind == settings.FromEnv {
		if src.ValueFile != "" {
			return "file " + src.ValueFile + " named by variable " + src.Name
		}
		return "variable " + src.Name
	}
	return src.String()
}
