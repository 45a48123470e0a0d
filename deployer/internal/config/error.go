package config

import "fmt"

// Error is a setting that is missing, malformed or contradictory. The deployer exits 2 on
// one, before it changes anything.
type Error struct {
	// Variable is the setting's variable (or both variables, for a value and its _FILE), or,
	// for the .env file, --env-file or .env.
	Variable string
	// Source is where the value came from, e.g. "flag --replicas" or ".env line 4"; "" when
	// the setting is missing.
	Source string
	// Problem says what is wrong.
	Problem string
	// Fix says what to do.
	Fix string
}

// Error reads "config: SWARM_LEASE_DEPLOY_REPLICAS (from .env line 4): "x" is not a whole
// number: use 1 or more".
func (e *Error) Error() string {
	s := "config: " + e.Variable
	if e.Source != "" {
		s += " (from " + e.Source + ")"
	}
	return fmt.Sprintf("%s: %s: %s", s, e.Problem, e.Fix)
}
