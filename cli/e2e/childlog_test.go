package e2e

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
)

// The child log is testchild's (cli/internal/testchild), read and checked by the fault
// checkers' reader and overlap check (faults/check), which the handover benchmark uses too.

// fenceOf is e's fence as a number, or fails t.
func fenceOf(t testing.TB, e check.ChildEvent) uint64 {
	f, err := strconv.ParseUint(e.Fence, 10, 64)
	if err != nil {
		t.Fatalf("child event without a fence: %+v", e)
	}
	return f
}

// buildTestChild builds the static testchild binary into dir.
func buildTestChild(t testing.TB, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "testchild")
	cmd := exec.Command("go", "build", "-o", out, "../internal/testchild")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build testchild: %v\n%s", err, b)
	}
	return out
}

// readChildEvents reads the log; a missing log is no events.
func readChildEvents(t testing.TB, path string) []check.ChildEvent {
	t.Helper()
	events, err := check.ReadChildEvents(path)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// waitForEvents polls the log until pred holds, or fails after timeout.
func waitForEvents(t testing.TB, path string, timeout time.Duration, what string, pred func([]check.ChildEvent) bool) []check.ChildEvent {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		events := readChildEvents(t, path)
		if pred(events) {
			return events
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; child log:\n%s", timeout, what, check.DescribeEvents(events))
		}
		time.Sleep(20 * time.Millisecond) // poll interval of the log file
	}
}

func countEvents(events []check.ChildEvent, name string) int {
	n := 0
	for _, e := range events {
		if e.Event == name {
			n++
		}
	}
	return n
}

func lastEvent(events []check.ChildEvent, name string) (check.ChildEvent, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Event == name {
			return events[i], true
		}
	}
	return check.ChildEvent{}, false
}

// checkOneChildAtATime checks that no two children's lives overlap and that fences strictly
// increase from child to child, and returns their terms. killedAt supplies the end of children
// killed without a chance to log (SIGKILL, docker kill); a child that is still running must be
// the last one.
func checkOneChildAtATime(t testing.TB, events []check.ChildEvent, killedAt map[string]time.Time) []check.Term {
	t.Helper()
	terms, err := check.Terms(events)
	for i := range terms {
		if k, ok := killedAt[terms[i].Child()]; ok && terms[i].Stop == 0 {
			terms[i].Stop = k.UnixNano()
		}
	}
	checked := slices.Clone(terms)
	if n := len(checked); n > 0 && checked[n-1].Stop == 0 {
		checked[n-1].Stop = math.MaxInt64 // the last child may run on
	}
	if err := errors.Join(err, check.Children(checked, nil, 0)); err != nil {
		t.Fatalf("not one child at a time: %v\n%s", err, check.DescribeEvents(events))
	}
	return terms
}
