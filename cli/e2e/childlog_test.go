package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// childEvent is one line of testchild's log (cli/internal/testchild).
type childEvent struct {
	Event    string `json:"event"`
	Fence    string `json:"fence"`
	HolderID string `json:"holder_id"`
	TaskID   string `json:"task_id"`
	NodeID   string `json:"node_id"`
	PID      int    `json:"pid"`
	Other    int    `json:"other_pid"`
	Hostname string `json:"hostname"`
	UnixNano int64  `json:"t"`
}

func (e childEvent) time() time.Time { return time.Unix(0, e.UnixNano) }

func (e childEvent) fence(t testing.TB) uint64 {
	f, err := strconv.ParseUint(e.Fence, 10, 64)
	if err != nil {
		t.Fatalf("child event without a fence: %+v", e)
	}
	return f
}

// childKey identifies one child across hosts (PIDs repeat between containers).
func (e childEvent) childKey() string { return fmt.Sprintf("%s/%d", e.Hostname, e.PID) }

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
func readChildEvents(t testing.TB, path string) []childEvent {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []childEvent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e childEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("child log line %q: %v", sc.Text(), err)
		}
		events = append(events, e)
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].UnixNano < events[j].UnixNano })
	return events
}

// waitForEvents polls the log until pred holds, or fails after timeout.
func waitForEvents(t testing.TB, path string, timeout time.Duration, what string, pred func([]childEvent) bool) []childEvent {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		events := readChildEvents(t, path)
		if pred(events) {
			return events
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; child log:\n%s", timeout, what, describeEvents(events))
		}
		time.Sleep(20 * time.Millisecond) // poll interval of the log file
	}
}

func countEvents(events []childEvent, name string) int {
	n := 0
	for _, e := range events {
		if e.Event == name {
			n++
		}
	}
	return n
}

func lastEvent(events []childEvent, name string) (childEvent, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Event == name {
			return events[i], true
		}
	}
	return childEvent{}, false
}

func describeEvents(events []childEvent) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "  %s %-12s fence=%s holder=%s task=%s pid=%s\n", e.time().Format("15:04:05.000"), e.Event, e.Fence, e.HolderID, e.TaskID, e.childKey())
	}
	return b.String()
}

// childInterval is the life of one child: from its start to its stop or exit event, or to the
// time it was killed (ended is then supplied by the test).
type childInterval struct {
	key        string
	fence      uint64
	start, end time.Time
}

// checkOneChildAtATime checks that no two children's lives overlap and that fences strictly
// increase from child to child. killedAt supplies the end of children killed without a chance
// to log (SIGKILL, docker kill); a child that is still running must be the last one.
func checkOneChildAtATime(t testing.TB, events []childEvent, killedAt map[string]time.Time) []childInterval {
	t.Helper()
	byKey := map[string]*childInterval{}
	var order []*childInterval
	for _, e := range events {
		switch e.Event {
		case "start":
			iv := &childInterval{key: e.childKey(), fence: e.fence(t), start: e.time()}
			byKey[iv.key] = iv
			order = append(order, iv)
		case "stop", "exit":
			if iv := byKey[e.childKey()]; iv != nil && iv.end.IsZero() {
				iv.end = e.time()
			}
		}
	}
	var out []childInterval
	for i, iv := range order {
		if iv.end.IsZero() {
			if k, ok := killedAt[iv.key]; ok {
				iv.end = k
			} else if i != len(order)-1 {
				t.Fatalf("child %s (fence %d) has no end but another child started after it:\n%s", iv.key, iv.fence, describeEvents(events))
			}
		}
		if i > 0 {
			prev := order[i-1]
			if !prev.end.IsZero() && iv.start.Before(prev.end) {
				t.Fatalf("children overlap: %s (fence %d) started at %s before %s (fence %d) ended at %s:\n%s",
					iv.key, iv.fence, iv.start.Format("15:04:05.000"), prev.key, prev.fence, prev.end.Format("15:04:05.000"), describeEvents(events))
			}
			if iv.fence <= prev.fence {
				t.Fatalf("fence did not increase: %d after %d:\n%s", iv.fence, prev.fence, describeEvents(events))
			}
		}
		out = append(out, *iv)
	}
	return out
}
