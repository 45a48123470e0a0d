package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// TestRunTwinsShareAHolderIDWithoutFlapping: two run processes with one holder id on one store
// (a documented misconfiguration) are two incarnations: neither takes the other's live term, so
// they never take the lease from each other — before incarnations, 200 and more terms in 10 s.
// The one that follows sees the other's term renewed under its own holder id, and logs an error
// naming the holder id and what to change.
func TestRunTwinsShareAHolderIDWithoutFlapping(t *testing.T) {
	leasetest.Long(t, "watches two supervisors for several TTLs")
	env, childLog := fileRunEnv(t)
	first := startRun(t, env, "twin")
	waitForEvents(t, childLog, 10*time.Second, "the first child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 1 })
	second := startRun(t, env, "twin")
	time.Sleep(5 * time.Second) // the span over which terms are counted (two and a half TTLs), not synchronisation
	events := readChildEvents(t, childLog)
	if n := countEvents(events, "start"); n != 1 {
		t.Fatalf("%d children in 5 s between two run processes of one holder id, want the first kept:\n%s", n, check.DescribeEvents(events))
	}
	logs := first.out.String() + second.out.String()
	if !strings.Contains(second.out.String(), "level=ERROR") || !strings.Contains(logs, "holder_id=twin") || !strings.Contains(logs, "own holder id") {
		t.Fatalf("no error naming the shared holder id and the fix:\n%s", logs)
	}
}
