package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Variables under the prefix that are not settings and are never warned about: FENCE is what
// run exports to its command (with HOLDER_ID, NODE_ID, TASK_ID and NAMESPACE, which are
// settings), so a command that is itself lfp-swarm-lease sees it; TEST_* is reserved for test
// suites (e.g. SWARM_LEASE_TEST_DOCKER_HOST).
const (
	childFenceSuffix = "FENCE"
	testPrefix       = "TEST_"
)

// UnknownVariables returns one warning for every variable named <prefix>_* that is neither a
// setting, nor a setting's _FILE variant, nor reserved (FENCE, TEST_*), naming the setting whose
// variable is closest to it by edit distance — a misspelt variable would otherwise be ignored
// without a word.
func UnknownVariables(prefix string, environ []string) []string {
	known := map[string]bool{}
	var names []string
	for _, s := range Settings {
		name := EnvName(prefix, s.Key)
		known[name], known[name+"_FILE"] = true, true
		names = append(names, name)
	}
	var warnings []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		rest, ok := strings.CutPrefix(name, prefix+"_")
		if !ok || known[name] || rest == childFenceSuffix || strings.HasPrefix(rest, testPrefix) {
			continue
		}
		base := strings.TrimSuffix(name, "_FILE")
		best, bestDist := "", 0
		for _, candidate := range names {
			if d := levenshtein.ComputeDistance(base, candidate); best == "" || d < bestDist {
				best, bestDist = candidate, d
			}
		}
		if base != name {
			best += "_FILE"
		}
		warnings = append(warnings, fmt.Sprintf("%s is not a setting and is ignored; the closest is %s (%s_FENCE and %s_TEST_* are reserved and never warned about)",
			name, best, prefix, prefix))
	}
	sort.Strings(warnings)
	return warnings
}
