package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// childEvent is one line of the log that cli/internal/testchild (the supervised child of the
// handover benchmark, built by scripts/bench-peers.sh) appends to TESTCHILD_LOG: its event, the
// fence and holder its supervisor gave it, and its own wall-clock time.
type childEvent struct {
	Event    string `json:"event"`
	Fence    string `json:"fence"`
	HolderID string `json:"holder_id"`
	PID      int    `json:"pid"`
	UnixNano int64  `json:"t"`
}

func (e childEvent) time() time.Time { return time.Unix(0, e.UnixNano) }

// ends reports whether the event ends the child's life: its stop or exit line, or its last
// heartbeat when it logged neither — it was killed (contenders.freeze).
func (e childEvent) ends() bool {
	return e.Event == "stop" || e.Event == "exit" || e.Event == "last-beat"
}

// lastBeat is the time of the last heartbeat of child (TESTCHILD_HEARTBEAT_DIR dir): the last
// time it ran.
func lastBeat(dir string, child childEvent) (time.Time, error) {
	b, err := os.ReadFile(filepath.Join(dir, child.Fence+"-"+strconv.Itoa(child.PID)))
	if err != nil {
		return time.Time{}, fmt.Errorf("the heartbeat of child %d: %w", child.PID, err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("the heartbeat of child %d: %w", child.PID, err)
	}
	return time.Unix(0, ns), nil
}

// readChildEvents reads the log in time order; a log not yet written is no events.
func readChildEvents(path string) ([]childEvent, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var events []childEvent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e childEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("child log %s: line %q: %w", path, sc.Text(), err)
		}
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("child log %s: %w", path, err)
	}
	slices.SortStableFunc(events, func(a, b childEvent) int { return cmp.Compare(a.UnixNano, b.UnixNano) })
	return events, nil
}

// startsOf returns the start events, in order.
func startsOf(events []childEvent) []childEvent {
	var out []childEvent
	for _, e := range events {
		if e.Event == "start" {
			out = append(out, e)
		}
	}
	return out
}

// liveChildren returns the children that started and have not logged their end.
func liveChildren(events []childEvent) []childEvent {
	var live []childEvent
	for _, e := range events {
		switch {
		case e.Event == "start":
			live = append(live, e)
		case e.ends():
			live = slices.DeleteFunc(live, func(l childEvent) bool { return l.PID == e.PID })
		}
	}
	return live
}

// childLife is one child's life, from its start to its end (zero while it runs).
type childLife struct {
	pid        int
	fence      uint64
	start, end time.Time
}

// overlapCheck is what the whole log says about one child at a time.
type overlapCheck struct {
	children int
	// worst is the longest time two children lived at once; a child still running counts as
	// living until now.
	worst time.Duration
	// problems lists every overlap and every fence that did not grow, for the output.
	problems []string
}

// checkOverlap checks that no two children of the log lived at once and that every child's
// fence is greater than the one before it.
func checkOverlap(events []childEvent, now time.Time) overlapCheck {
	var lives []*childLife
	byPID := map[int]*childLife{}
	var r overlapCheck
	for _, e := range events {
		switch {
		case e.Event == "start":
			fence, err := strconv.ParseUint(e.Fence, 10, 64)
			if err != nil {
				r.problems = append(r.problems, fmt.Sprintf("child %d started without a numeric fence (%q)", e.PID, e.Fence))
			}
			l := &childLife{pid: e.PID, fence: fence, start: e.time()}
			lives = append(lives, l)
			byPID[e.PID] = l
		case e.ends():
			if l := byPID[e.PID]; l != nil && l.end.IsZero() {
				l.end = e.time()
			}
		}
	}
	r.children = len(lives)
	for i, a := range lives {
		aEnd := a.end
		if aEnd.IsZero() {
			aEnd = now
		}
		for _, b := range lives[i+1:] {
			bEnd := b.end
			if bEnd.IsZero() {
				bEnd = now
			}
			if both := min(aEnd.UnixNano(), bEnd.UnixNano()) - max(a.start.UnixNano(), b.start.UnixNano()); both > 0 {
				r.worst = max(r.worst, time.Duration(both))
				r.problems = append(r.problems, fmt.Sprintf("children %d and %d lived at once for %v", a.pid, b.pid, time.Duration(both)))
			}
		}
		if i > 0 && a.fence <= lives[i-1].fence {
			r.problems = append(r.problems, fmt.Sprintf("child %d's fence %d is not above child %d's %d", a.pid, a.fence, lives[i-1].pid, lives[i-1].fence))
		}
	}
	return r
}

// describeEvents formats the log for an error message.
func describeEvents(events []childEvent) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "  %s %-6s fence=%s holder=%s pid=%d\n", e.time().UTC().Format("15:04:05.000"), e.Event, e.Fence, e.HolderID, e.PID)
	}
	return b.String()
}
