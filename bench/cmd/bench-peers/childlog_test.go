package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// at is a child event at t0 + ms milliseconds.
func at(ms int64, event string, pid int, fence string) childEvent {
	return childEvent{Event: event, PID: pid, Fence: fence, UnixNano: time.Unix(1000, 0).Add(time.Duration(ms) * time.Millisecond).UnixNano()}
}

func TestCheckOverlap(t *testing.T) {
	now := time.Unix(1000, 0).Add(10 * time.Second)
	t.Run("one child at a time", func(t *testing.T) {
		r := checkOverlap([]childEvent{at(0, "start", 1, "5"), at(100, "stop", 1, "5"), at(110, "start", 2, "6"), at(500, "exit", 2, "6"), at(900, "start", 3, "9")}, now)
		if r.worst != 0 || len(r.problems) != 0 || r.children != 3 {
			t.Fatalf("got %+v, want 3 children and no problem", r)
		}
	})
	t.Run("a child starting before the previous one stopped", func(t *testing.T) {
		r := checkOverlap([]childEvent{at(0, "start", 1, "5"), at(90, "start", 2, "6"), at(100, "stop", 1, "5")}, now)
		if r.worst != 10*time.Millisecond || len(r.problems) != 1 {
			t.Fatalf("got %+v, want one overlap of 10ms", r)
		}
	})
	t.Run("a child that never logged its end lives until now", func(t *testing.T) {
		r := checkOverlap([]childEvent{at(0, "start", 1, "5"), at(1000, "start", 2, "6")}, now)
		if r.worst != 9*time.Second {
			t.Fatalf("got %+v, want an overlap of 9s (child 2's start until now)", r)
		}
	})
	t.Run("a fence that does not grow", func(t *testing.T) {
		r := checkOverlap([]childEvent{at(0, "start", 1, "5"), at(100, "stop", 1, "5"), at(200, "start", 2, "5"), at(300, "stop", 2, "5"), at(400, "start", 3, "x")}, now)
		if len(r.problems) != 3 || !strings.Contains(r.problems[0], "numeric fence") || !strings.Contains(r.problems[1], "not above") {
			t.Fatalf("got %q, want a missing fence and two that do not grow", r.problems)
		}
	})
}

func TestLiveChildren(t *testing.T) {
	live := liveChildren([]childEvent{at(0, "start", 1, "1"), at(5, "start", 2, "2"), at(10, "stop", 1, "1"), at(20, "start", 3, "3"), at(30, "exit", 3, "3")})
	if len(live) != 1 || live[0].PID != 2 {
		t.Fatalf("live children %+v, want only 2", live)
	}
}

func TestReadChildEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.log")
	if events, err := readChildEvents(path); err != nil || events != nil {
		t.Fatalf("missing log: %v, %v; want no events", events, err)
	}
	// Lines of concurrent children arrive in write order, not time order.
	if err := os.WriteFile(path, []byte(`{"event":"stop","pid":1,"fence":"1","t":200}`+"\n"+`{"event":"start","pid":1,"fence":"1","t":100}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	events, err := readChildEvents(path)
	if err != nil || len(events) != 2 || events[0].Event != "start" {
		t.Fatalf("got %+v, %v; want start then stop", events, err)
	}
	if err := os.WriteFile(path, []byte("not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readChildEvents(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a bad line: %v, want an error naming %s", err, path)
	}
}
