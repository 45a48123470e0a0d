package timing_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/timing"
)

// TestFailuresReportAtABoundedRate: a failure every second for five minutes is reported at
// 0, 5, 15, 35 and 75 s, then once a minute, each report carrying the count and the last cause;
// a success ends the run and says how long it was.
func TestFailuresReportAtABoundedRate(t *testing.T) {
	var f timing.Failures
	start := time.Unix(1_000_000, 0)
	var reported []int // seconds since start
	for s := range 300 {
		now := start.Add(time.Duration(s) * time.Second)
		if f.Fail(now, fmt.Errorf("failure %d", s)) {
			reported = append(reported, s)
			if f.Count() != s+1 || f.Last().Error() != fmt.Sprintf("failure %d", s) || !f.Since().Equal(start) {
				t.Fatalf("at %d s: count %d, last %v, since %v", s, f.Count(), f.Last(), f.Since())
			}
		}
	}
	want := []int{0, 5, 15, 35, 75, 135, 195, 255}
	if fmt.Sprint(reported) != fmt.Sprint(want) {
		t.Fatalf("reports at %v s, want %v", reported, want)
	}
	if n := f.Succeed(); n != 300 || f.Count() != 0 || f.Last() != nil {
		t.Fatalf("Succeed = %d, then count %d, last %v; want 300, 0, nil", n, f.Count(), f.Last())
	}
	if n := f.Succeed(); n != 0 {
		t.Fatalf("a second Succeed = %d, want 0", n)
	}
	// A new run starts over: its first failure is reported at once.
	if !f.Fail(start.Add(time.Hour), errors.New("again")) || f.Count() != 1 {
		t.Fatal("the first failure of a new run was not reported")
	}
}
