package faults_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// longOps is how many lease operations the long variant makes at least.
const longOps = 10_000

// TestLongCampaign runs every scenario, in rounds (the lease scenarios in a random order, then
// the elections one), with seeded random fault timing, until the one-shot callers have made
// longOps lease operations. Only with -long (scripts/fault-campaign.sh);
// FAULTS_SEED=N replays a run's fault timing and operation mix (not its interleaving).
func TestLongCampaign(t *testing.T) {
	if !*long {
		t.Skip("the long fault campaign runs with -long (scripts/fault-campaign.sh)")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FAULTS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("FAULTS_SEED=%q is not an unsigned integer: %v", s, err)
		}
	}
	t.Logf("seed %d (replay with FAULTS_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	total := 0
	for round := 1; total < longOps; round++ {
		for _, i := range rng.Perm(len(scenarios)) {
			sc := scenarios[i]
			scenarioSeed := rng.Uint64()
			t.Run(fmt.Sprintf("round%d/%s", round, sc.name), func(t *testing.T) {
				r := sc.rig(t, scenarioSeed)
				sc.run(r)
				total += r.calls
			})
			if t.Failed() {
				t.Fatalf("stopping after the first failing scenario; seed %d", seed)
			}
		}
		electionsSeed := rng.Uint64()
		t.Run(fmt.Sprintf("round%d/ElectionsUnderFaults", round), func(t *testing.T) { electionsUnderFaults(t, electionsSeed) })
		if t.Failed() {
			t.Fatalf("stopping after the first failing scenario; seed %d", seed)
		}
		t.Logf("after round %d: %d lease operations", round, total)
	}
	t.Logf("long campaign: %d lease operations, 0 violations, seed %d", total, seed)
}
