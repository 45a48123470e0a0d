package check_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
)

// TestReadChildEvents: a missing log is no events; lines come back in time order, which is not
// the order concurrent children write them in; a bad line is an error naming the log.
func TestReadChildEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.log")
	if events, err := check.ReadChildEvents(path); err != nil || events != nil {
		t.Fatalf("missing log: %v, %v; want no events", events, err)
	}
	if err := os.WriteFile(path, []byte(`{"event":"stop","pid":1,"fence":"1","t":200}`+"\n"+`{"event":"start","pid":1,"fence":"1","t":100}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	events, err := check.ReadChildEvents(path)
	if err != nil || len(events) != 2 || events[0].Event != "start" || events[0].Time() != time.Unix(0, 100) {
		t.Fatalf("got %+v, %v; want start then stop", events, err)
	}
	if err := os.WriteFile(path, []byte("not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := check.ReadChildEvents(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a bad line: %v, want an error naming %s", err, path)
	}
}

// at is a child event at ms milliseconds.
func at(ms int64, event, host string, pid int, fence string) check.ChildEvent {
	return check.ChildEvent{Event: event, Hostname: host, PID: pid, Fence: fence, At: ms * int64(time.Millisecond)}
}

// TestTerms: a start and the first stop or exit of the same child (host and PID: PIDs repeat
// between containers) make a term; one still running has no stop; a fence that is not a number
// is an error.
func TestTerms(t *testing.T) {
	terms, err := check.Terms([]check.ChildEvent{
		at(0, "start", "a", 1, "5"), at(10, "start", "b", 1, "6"), at(20, "stop", "a", 1, "5"),
		at(30, "exit", "a", 1, "5"), at(40, "grandchild", "b", 1, "6"),
	})
	if err != nil || len(terms) != 2 || terms[0].Child() != "a/1" || terms[0].Stop != 20*int64(time.Millisecond) ||
		terms[1].Child() != "b/1" || terms[1].Fence != 6 || terms[1].Stop != 0 {
		t.Fatalf("got %+v, %v; want a/1 stopped at 20 ms and b/1 running", terms, err)
	}
	if _, err := check.Terms([]check.ChildEvent{at(0, "start", "", 3, "x")}); err == nil || !strings.Contains(err.Error(), "numeric fence") {
		t.Fatalf("a fence x: %v, want an error", err)
	}
}

// TestOverlap: the longest time two terms ran at once.
func TestOverlap(t *testing.T) {
	ms := int64(time.Millisecond)
	if got := check.Overlap([]check.Term{{Start: 0, Stop: 100 * ms}, {Start: 110 * ms, Stop: 500 * ms}}); got != 0 {
		t.Errorf("one at a time: %v, want 0", got)
	}
	if got := check.Overlap([]check.Term{{Start: 0, Stop: 100 * ms}, {Start: 90 * ms, Stop: 500 * ms}, {Start: 200 * ms, Stop: 230 * ms}}); got != 30*time.Millisecond {
		t.Errorf("overlaps of 10 and 30 ms: %v, want 30ms", got)
	}
}
