package check

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ChildEvent is one line of a supervised test child's log, one JSON object a line, as the fault
// campaigns' child (faults/internal/faultchild) and the command's (cli/internal/testchild, of
// its end-to-end tests and the handover benchmark) append it.
type ChildEvent struct {
	// Event is "start", or "stop" or "exit", which end a child, or "overlap": the child found
	// the lock every child holds for its life held by another when it started (faultchild;
	// testchild with TESTCHILD_EXCLUSIVE). testchild logs others too ("grandchild",
	// "term-ignored").
	Event string `json:"event"`
	// Fence, HolderID, TaskID and NodeID are what the child's supervisor gave it.
	Fence    string `json:"fence"`
	HolderID string `json:"holder_id"`
	TaskID   string `json:"task_id"`
	NodeID   string `json:"node_id"`
	PID      int    `json:"pid"`
	// Other is another process the event names (testchild's grandchild).
	Other int `json:"other_pid,omitempty"`
	// Hostname tells apart children in different containers, whose PIDs repeat.
	Hostname string `json:"hostname,omitempty"`
	// At is when, in nanoseconds: testchild's Unix time; faultchild's CLOCK_MONOTONIC, one clock
	// for every child on one kernel, which no wall-clock step moves.
	At int64 `json:"t"`
}

// Time is At as a time.Time.
func (e ChildEvent) Time() time.Time { return time.Unix(0, e.At) }

// Child names the child across hosts: HOSTNAME/PID.
func (e ChildEvent) Child() string { return e.Hostname + "/" + strconv.Itoa(e.PID) }

// ReadChildEvents reads a child log in time order; a log not yet written is no events.
func ReadChildEvents(path string) ([]ChildEvent, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var events []ChildEvent
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var e ChildEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("child log %s line %d: %q: %w", path, line, sc.Text(), err)
		}
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("child log %s: %w", path, err)
	}
	slices.SortStableFunc(events, func(a, b ChildEvent) int { return cmp.Compare(a.At, b.At) })
	return events, nil
}

// DescribeEvents is a log for a message, an event a line.
func DescribeEvents(events []ChildEvent) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "  %s %-12s fence=%s holder=%s task=%s child=%s\n", e.Time().UTC().Format("15:04:05.000"), e.Event, e.Fence, e.HolderID, e.TaskID, e.Child())
	}
	return b.String()
}

// Term is one child's life: from its start to its end (Stop is 0 while it runs).
type Term struct {
	Fence  uint64
	Holder string
	// Host and PID name the child (Child).
	Host        string
	PID         int
	Start, Stop int64
	// Overlap: the child found another child's lock held when it started.
	Overlap bool
	// Killed: the child was killed with its container and could log no end; its Stop, set by
	// the caller, is when the container was seen gone — a bound, so its overlap with a later
	// child is the lock's to tell (Overlap), not the clock's.
	Killed bool
}

// Child names the term's child as ChildEvent.Child does.
func (t Term) Child() string { return t.Host + "/" + strconv.Itoa(t.PID) }

// Terms pairs the start and end events by child, in start order. A start whose fence is not a
// number is an error, and its term has fence 0.
func Terms(events []ChildEvent) ([]Term, error) {
	byChild := map[string]int{}
	overlaps := map[string]bool{}
	var terms []Term
	var errs []error
	for _, e := range events {
		switch e.Event {
		case "overlap":
			overlaps[e.Child()] = true
		case "start":
			fence, err := strconv.ParseUint(e.Fence, 10, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("child %s started without a numeric fence (%q)", e.Child(), e.Fence))
			}
			byChild[e.Child()] = len(terms)
			terms = append(terms, Term{Fence: fence, Holder: e.HolderID, Host: e.Hostname, PID: e.PID, Start: e.At, Overlap: overlaps[e.Child()]})
		case "stop", "exit":
			if i, ok := byChild[e.Child()]; ok && terms[i].Stop == 0 {
				terms[i].Stop = e.At
			}
		}
	}
	slices.SortStableFunc(terms, func(a, b Term) int { return cmp.Compare(a.Start, b.Start) })
	return terms, errors.Join(errs...)
}

// Overlap is the longest time two of the terms ran at once, 0 when none did: a figure beside
// Children's verdict. A term that still runs needs its Stop set to the time of the check.
func Overlap(terms []Term) time.Duration {
	var worst int64
	for i, a := range terms {
		for _, b := range terms[i+1:] {
			worst = max(worst, min(a.Stop, b.Stop)-max(a.Start, b.Start))
		}
	}
	return time.Duration(worst)
}

// Thaw records that a child (Term.Child) was frozen and thawed at Mono: the documented
// exception to "never two children at once", which fencing covers.
type Thaw struct {
	Child string
	Mono  int64
}

// Children checks the children's terms: every child stopped (all supervisors have been stopped
// when it is called); fences strictly increase in start order, so none is reused; no two terms
// overlap, by the clock and by the lock (no child found another's held) — except a term whose
// child was frozen past its deadline (thaws), which must have a lower fence than every term it
// overlaps and must stop within prompt of its thaw. A killed child's end is the lock's to tell.
// The terms may come in any order: a holder that records its term after resigning records it
// late when the resignation blocks, after a successor's.
func Children(terms []Term, thaws []Thaw, prompt time.Duration) error {
	terms = slices.SortedStableFunc(slices.Values(terms), func(a, b Term) int { return cmp.Compare(a.Start, b.Start) })
	var errs []error
	thawedAt := map[string]int64{}
	for _, th := range thaws {
		thawedAt[th.Child] = th.Mono
	}
	// fencedOut reports whether a thawed child with a fence below b's lived when b started.
	fencedOut := func(b Term) bool {
		return slices.ContainsFunc(terms, func(a Term) bool {
			_, frozen := thawedAt[a.Child()]
			return frozen && a.Fence < b.Fence && a.Start < b.Start && (a.Stop == 0 || a.Stop > b.Start)
		})
	}
	for i, a := range terms {
		if a.Stop == 0 {
			errs = append(errs, fmt.Errorf("child %s (holder %s, fence %d) never logged its stop", a.Child(), a.Holder, a.Fence))
			continue
		}
		if a.Overlap && !fencedOut(a) {
			errs = append(errs, fmt.Errorf("two children at once: child %s (holder %s, fence %d) found another child's lock held when it started at +%v",
				a.Child(), a.Holder, a.Fence, time.Duration(a.Start-terms[0].Start)))
		}
		if thaw, ok := thawedAt[a.Child()]; ok && a.Stop > thaw+prompt.Nanoseconds() {
			errs = append(errs, fmt.Errorf("frozen child %d (fence %d) stopped %v after its thaw, later than %v",
				a.PID, a.Fence, time.Duration(a.Stop-thaw), prompt))
		}
		for _, b := range terms[i+1:] {
			if b.Fence <= a.Fence {
				errs = append(errs, fmt.Errorf("fence did not increase: child %d (holder %s) started with fence %d after child %d (holder %s) with fence %d",
					b.PID, b.Holder, b.Fence, a.PID, a.Holder, a.Fence))
			}
			if b.Start >= a.Stop || a.Killed {
				continue
			}
			if _, frozen := thawedAt[a.Child()]; frozen && a.Fence < b.Fence {
				continue // fenced out: the resource rejects the thawed child's lower fence
			}
			errs = append(errs, fmt.Errorf("two children at once: child %d (holder %s, fence %d) ran until +%v, child %d (holder %s, fence %d) started at +%v",
				a.PID, a.Holder, a.Fence, time.Duration(a.Stop-terms[0].Start), b.PID, b.Holder, b.Fence, time.Duration(b.Start-terms[0].Start)))
		}
	}
	return errors.Join(errs...)
}

// FirstStartAfter returns the first term that started after mono, if any.
func FirstStartAfter(terms []Term, mono int64) (Term, bool) {
	for _, t := range terms {
		if t.Start > mono {
			return t, true
		}
	}
	return Term{}, false
}

// Running returns the term running at mono (started before it, not stopped by it), if any.
func Running(terms []Term, mono int64) (Term, bool) {
	for _, t := range slices.Backward(terms) {
		if t.Start <= mono && (t.Stop == 0 || t.Stop > mono) {
			return t, true
		}
	}
	return Term{}, false
}
