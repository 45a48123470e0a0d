package settings

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Warnings returns, sorted, one warning for every variable of the layers (the environment's, a
// .env file's) that is under the prefix but is neither a setting, nor a setting's _FILE
// variable, nor Reserved: a misspelt variable would otherwise be ignored without a word. Each
// names the setting whose variable is closest by edit distance (its _FILE variable for a name
// ending in _FILE), and where the variable is when it is not the environment's:
//
//	SWARM_LEASE_TTL is not a setting and is ignored; the closest is SWARM_LEASE_TTL_MS
//	SWARM_LEASE_DEPLOY_STAK_NAME, at /repo/.env line 3, is not a setting and is ignored; the closest is SWARM_LEASE_DEPLOY_STACK_NAME
//
// followed, when the schema has reserved names, by which they are. A warning never shows a
// value.
func (s *Schema) Warnings(layers ...Layer) []string {
	names := make([]string, 0, len(s.Settings))
	for _, st := range s.Settings {
		names = append(names, s.Variable(st.Key))
	}
	var reserved []string
	for _, r := range s.Reserved {
		reserved = append(reserved, s.Prefix+"_"+r)
	}
	var warnings []string
	for _, l := range layers {
		for _, src := range l.unknown {
			base := strings.TrimSuffix(src.Name, FileSuffix)
			best := Closest(base, names)
			if best != "" && base != src.Name {
				best += FileSuffix
			}
			w := src.Name
			if src.Kind == FromDotEnv {
				w += fmt.Sprintf(", at %s line %d,", src.File, src.Line)
			}
			w += " is not a setting and is ignored"
			if best != "" {
				w += "; the closest is " + best
			}
			if len(reserved) > 0 {
				w += " (" + strings.Join(reserved, " and ") + " are reserved and never warned about)"
			}
			warnings = append(warnings, w)
		}
	}
	sort.Strings(warnings)
	return warnings
}

// Closest is the candidate meant by name, a misspelt variable or flag: the shortest candidate
// that name begins (TTL: TTL_MS), else the closest by edit distance (the first of equals) when
// that distance is small enough to be a slip — at most a third of name's length, and at least 2;
// "" when there is none. It is the one rule by which both are answered.
func Closest(name string, candidates []string) string {
	best, bestDistance := "", 0
	for _, candidate := range candidates {
		d := levenshtein.ComputeDistance(name, candidate)
		if strings.HasPrefix(candidate, name) {
			d -= len(candidate) + len(name) // below every distance, and shorter first
		}
		if best == "" || d < bestDistance {
			best, bestDistance = candidate, d
		}
	}
	if bestDistance > max(2, len(name)/3) {
		return ""
	}
	return best
}
