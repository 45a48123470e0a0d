package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// TestRunTwinsShareAHolderIDWithoutFlapping: two run processes with one holder id on one store
// (a documented misconfiguration) must not take the lease from each other forever — before,
// 200 and more terms in 10 s, with no line naming the cause. The one that loses its term to
// the other logs an error naming the holder id and what to change, and follows from then on.
func TestRunTwinsShareAHolderIDWithoutFlapping(t *testing.T) {
	leasetest.Long(t, "watches two supervisors for several TTLs")
	env, childLog := fileRunEnv(t)
	first := startRun(t, env, "twin")
	waitForEvents(t, childLog, 10*time.Second, "the first child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 1 })
	second := startRun(t, env, "twin")
	// The second one's first try-acquire takes the term over, as a restarted contender's
	// would; the first learns from it that another process has its identity.
	waitForEvents(t, childLog, 10*time.Second, "the second child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 2 })
	time.Sleep(5 * time.Second) // the span over which terms are counted (two and a half TTLs), not synchronisation
	events := readChildEvents(t, childLog)
	if n := countEvents(events, "start"); n > 3 {
		t.Fatalf("%d children in 5 s between two run processes of one holder id:\n%s", n, check.DescribeEvents(events))
	}
	checkOneChildAtATime(t, events, nil)
	logs := first.out.String() + second.out.String()
	if !strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "holder_id=twin") || !strings.Contains(logs, "own holder id") {
		t.Fatalf("no error naming the shared holder id and the fix:\n%s", logs)
	}
}
