package check

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ChildEvent is one line of a fault child's log (faults/internal/faultchild).
type ChildEvent struct {
	Kind   string // "start", "stop" or "overlap"
	Fence  uint64
	Holder string
	PID    int
	Mono   int64 // CLOCK_MONOTONIC, ns
	Task   string
}

// ReadChildEvents parses the children's shared log; a missing log is no events.
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
		fields := strings.Fields(sc.Text())
		if len(fields) != 6 || !slices.Contains([]string{"start", "stop", "overlap"}, fields[0]) {
			return nil, fmt.Errorf("%s line %d: %q is not \"start|stop|overlap FENCE HOLDER PID NS TASK\"", path, line, sc.Text())
		}
		fence, err1 := strconv.ParseUint(fields[1], 10, 64)
		pid, err2 := strconv.Atoi(fields[3])
		mono, err3 := strconv.ParseInt(fields[4], 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		events = append(events, ChildEvent{Kind: fields[0], Fence: fence, Holder: fields[2], PID: pid, Mono: mono, Task: fields[5]})
	}
	return events, sc.Err()
}

// Term is one child's life: from its start to its stop (Stop is 0 while it runs).
type Term struct {
	Fence       uint64
	Holder      string
	PID         int
	Start, Stop int64
	// Task is the supervisor's task: with PID, what tells this child from every other.
	Task string
	// Overlap: the child found another child's lock held when it started (faultchild).
	Overlap bool
	// Killed: the child was killed with its container and could not log its stop; Stop is
	// when the test saw the container gone, a bound, and the lock stands in for the clock.
	Killed bool
}

// child identifies one child.
type child struct {
	task string
	pid  int
}

func (t Term) child() child { return child{t.Task, t.PID} }

// Kill records a child killed with its container (SIGKILL), which logs no stop: Gone is a
// monotonic time by which the container was seen gone.
type Kill struct {
	Task string
	PID  int
	Gone int64
}

// Terms pairs the start, stop and overlap events by child, in start order; a killed child
// (kills) that logged no stop ends when it was seen gone.
func Terms(events []ChildEvent, kills []Kill) []Term {
	byChild := map[child]int{}
	var terms []Term
	overlaps := map[child]bool{}
	for _, e := range events {
		c := child{e.Task, e.PID}
		switch e.Kind {
		case "start":
			byChild[c] = len(terms)
			terms = append(terms, Term{Fence: e.Fence, Holder: e.Holder, PID: e.PID, Start: e.Mono, Task: e.Task, Overlap: overlaps[c]})
		case "stop":
			if i, ok := byChild[c]; ok {
				terms[i].Stop = e.Mono
			}
		case "overlap":
			overlaps[c] = true
		}
	}
	for _, k := range kills {
		if i, ok := byChild[child{k.Task, k.PID}]; ok && terms[i].Stop == 0 {
			terms[i].Stop, terms[i].Killed = k.Gone, true
		}
	}
	slices.SortFunc(terms, func(a, b Term) int { return cmp.Compare(a.Start, b.Start) })
	return terms
}

// Thaw records that a child was frozen and thawed at Mono: the documented exception to "never
// two children at once", which fencing covers.
type Thaw struct {
	Task string
	PID  int
	Mono int64
}

// Children checks the children's terms: every child stopped (all supervisors have been stopped
// when it is called); fences strictly increase in start order, so none is reused; no two terms
// overlap, by the clock and by the lock (no child found another's lock held) — except a term
// whose child was frozen past its deadline (thaws), which must have a lower fence than every
// term it overlaps and must stop within prompt of its thaw. A killed child's end is known only
// by the lock. The terms may come in any order: a holder that records its term after resigning
// records it late when the resignation blocks, after a successor's.
func Children(terms []Term, thaws []Thaw, prompt time.Duration) error {
	terms = slices.SortedStableFunc(slices.Values(terms), func(a, b Term) int { return cmp.Compare(a.Start, b.Start) })
	var errs []error
	thawedAt := map[child]int64{}
	for _, th := range thaws {
		thawedAt[child{th.Task, th.PID}] = th.Mono
	}
	// fencedOut reports whether a thawed child with a fence below b's lived when b started.
	fencedOut := func(b Term) bool {
		return slices.ContainsFunc(terms, func(a Term) bool {
			_, frozen := thawedAt[a.child()]
			return frozen && a.Fence < b.Fence && a.Start < b.Start && (a.Stop == 0 || a.Stop > b.Start)
		})
	}
	for i, a := range terms {
		if a.Stop == 0 {
			errs = append(errs, fmt.Errorf("child %d (holder %s, task %s, fence %d) never logged its stop", a.PID, a.Holder, a.Task, a.Fence))
			continue
		}
		if a.Overlap && !fencedOut(a) {
			errs = append(errs, fmt.Errorf("two children at once: child %d (holder %s, task %s, fence %d) found another child's lock held when it started at +%v",
				a.PID, a.Holder, a.Task, a.Fence, time.Duration(a.Start-terms[0].Start)))
		}
		if thaw, ok := thawedAt[a.child()]; ok && a.Stop > thaw+prompt.Nanoseconds() {
			errs = append(errs, fmt.Errorf("frozen child %d (fence %d) stopped %v after its thaw, later than %v",
				a.PID, a.Fence, time.Duration(a.Stop-thaw), prompt))
		}
		for _, b := range terms[i+1:] {
			if b.Fence <= a.Fence {
				errs = append(errs, fmt.Errorf("fence did not increase: child %d (holder %s) started with fence %d after child %d (holder %s) with fence %d",
					b.PID, b.Holder, b.Fence, a.PID, a.Holder, a.Fence))
			}
			if b.Start >= a.Stop || a.Killed {
				continue // a killed child's end is known by the lock only
			}
			if _, frozen := thawedAt[a.child()]; frozen && a.Fence < b.Fence {
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
