// Package childenv is the environment the deployer gives the processes it starts (git, go
// build): its own, without the deployer's settings. Those hold the Portainer API key and
// password and the registry token, and a child's environment is readable by the child, by
// whatever it runs in turn and, on many systems, by other users through /proc.
package childenv

import (
	"os"
	"strings"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/settingtable"
)

// Environ is os.Environ() without any SWARM_LEASE_DEPLOY_* variable (the _FILE forms
// included).
func Environ() []string {
	return Without(os.Environ(), settingtable.Prefix)
}

// Without is env (NAME=VALUE entries) without the variables whose name starts with prefix.
func Without(env []string, prefix string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, prefix) {
			out = append(out, kv)
		}
	}
	return out
}
