package config

import (
	"fmt"

	"github.com/agnivade/levenshtein"
)

// unknownWarning says that name (a SWARM_LEASE_DEPLOY_* variable that is no setting) is
// ignored, and names the closest setting's variable: a misspelt name is otherwise a setting
// that silently keeps its default.
func unknownWarning(name, where string) string {
	best, bestDistance := "", -1
	for _, s := range Settings {
		for _, candidate := range []string{s.Variable(), s.FileVariable()} {
			if d := levenshtein.ComputeDistance(name, candidate); bestDistance < 0 || d < bestDistance {
				best, bestDistance = candidate, d
			}
		}
	}
	return fmt.Sprintf("config: %s is not a setting and is ignored (from %s); did you mean %s?", name, where, best)
}
