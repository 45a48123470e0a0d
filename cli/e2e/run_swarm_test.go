package e2e

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/images/imagestest"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// Timing of the services under test: a short TTL so that takeovers after a kill or a pause
// take seconds, a short grace so that a stop is quick, and a fast follower poll.
const (
	runSwarmTTL      = 3 * time.Second
	runSwarmGrace    = 500 * time.Millisecond
	runSwarmPoll     = 200 * time.Millisecond
	runSwarmRenew    = runSwarmTTL / 3 // the default renew interval
	runSwarmReplicas = 3
	// runSwarmQuiet is how long a test watches for a second child that must not start: five
	// follower polls.
	runSwarmQuiet = 5 * runSwarmPoll
)

// runSwarmImage is the image recipe's image of the static lfp-swarm-lease and testchild, made
// once per test binary run (see swarmRunImage).
var runSwarmImage struct {
	mu  sync.Mutex
	tag string
}

// swarmRunImage builds, on the first call, static (CGO_ENABLED=0) lfp-swarm-lease and testchild
// binaries, loads the image recipe's image of both into the engine at host (lfp-swarm-lease
// the entrypoint, testchild at runSwarmChild beside it) and returns its tag. A failed build
// fails the calling test; the next test tries again.
func swarmRunImage(t *testing.T, host string) string {
	t.Helper()
	runSwarmImage.mu.Lock()
	defer runSwarmImage.mu.Unlock()
	if runSwarmImage.tag != "" {
		return runSwarmImage.tag
	}
	dir, err := os.MkdirTemp("", "lfp-swarm-lease-run-image")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir) // the image keeps its own copies
	static := filepath.Join(dir, "lfp-swarm-lease")
	build := exec.Command("go", "build", "-o", static, "../cmd/lfp-swarm-lease")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("static build of lfp-swarm-lease: %v\n%s", err, out)
	}
	child := buildTestChild(t, dir)
	tag := "lfp-swarm-lease-test:run-swarm"
	imagestest.Load(t, host, tag, imagestest.Image(t, static, child))
	runSwarmImage.tag = tag
	return tag
}

// runSwarmChild is testchild's path in the image of swarmRunImage.
var runSwarmChild = imagestest.Path("testchild")

// runService is one Swarm service of `lfp-swarm-lease run -- testchild` replicas under test.
type runService struct {
	t       *testing.T
	host    string
	name    string // the service, also the election's namespace (discovered from task labels)
	anchor  string // the election's anchor service
	log     string // the host path of the children's shared event log
	nodeID  string // the only node's ID: every replica's discovered holder ID
	created time.Time
}

// deployRunService creates a service of runSwarmReplicas replicas, each running
// `lfp-swarm-lease run -- testchild` with the Docker socket mounted and Docker's default
// hostname, so that the namespace, holder and task are discovered from the task's labels. The
// children log to one file in a host directory bind-mounted into every replica. The service and
// its anchor are removed when the test ends. It returns once every replica runs and exactly one
// child has started — and no second one within runSwarmQuiet.
func deployRunService(t *testing.T) *runService {
	t.Helper()
	return deployRunServiceTTL(t, runSwarmTTL)
}

// deployRunServiceTTL is deployRunService with a lease TTL of ttl.
func deployRunServiceTTL(t *testing.T, ttl time.Duration) *runService {
	t.Helper()
	host := leasetest.SwarmHost(t)
	image := swarmRunImage(t, host)
	shared := t.TempDir()
	s := &runService{
		t: t, host: host, name: "run-" + leasetest.Namespace(t), log: filepath.Join(shared, "events.log"),
		nodeID: leasetest.Docker(t, host, "info", "--format", "{{.Swarm.NodeID}}"),
	}
	s.anchor = s.name + "-lease"
	socket := strings.TrimPrefix(host, "unix://")
	s.created = time.Now()
	leasetest.Docker(t, host, "service", "create", "-d", "--no-resolve-image", "--name", s.name,
		"--replicas", strconv.Itoa(runSwarmReplicas),
		// Swarm's SIGTERM → SIGKILL must not cut the child's stop and the release.
		"--stop-grace-period", "5s",
		"--mount", "type=bind,source="+socket+",target=/var/run/docker.sock",
		"--mount", "type=bind,source="+shared+",target=/shared",
		"--env", "TESTCHILD_LOG=/shared/events.log",
		"--env", "SWARM_LEASE_TTL_MS="+strconv.FormatInt(ttl.Milliseconds(), 10),
		"--env", "SWARM_LEASE_SHUTDOWN_TIMEOUT_MS="+strconv.FormatInt(runSwarmGrace.Milliseconds(), 10),
		"--env", "SWARM_LEASE_DEFAULT_POLL_MS="+strconv.FormatInt(runSwarmPoll.Milliseconds(), 10),
		image, "run", "--", runSwarmChild)
	t.Cleanup(s.remove)

	first := s.waitForChildStart(30*time.Second, 0)
	s.waitForContainers(runSwarmReplicas, 30*time.Second)
	t.Logf("service %s: first child (fence %s) started %v after create, in container %s",
		s.name, first.Fence, first.Time().Sub(s.created).Round(time.Millisecond), first.Hostname)
	// Time passing is what is tested here: every replica runs and polls; none may start a second child.
	time.Sleep(runSwarmQuiet)
	events := s.events()
	if n := countEvents(events, "start"); n != 1 {
		t.Fatalf("%d children started, want exactly 1, with %d replicas running:\n%s", n, runSwarmReplicas, check.DescribeEvents(events))
	}
	if countEvents(events, "stop")+countEvents(events, "exit") != 0 {
		t.Fatalf("the first child ended without a reason:\n%s", check.DescribeEvents(events))
	}
	return s
}

// remove dumps diagnostics if the test failed, removes the service, waits for its containers to
// be gone (so that no replica recreates the anchor or writes to the shared directory while it is
// removed) and removes the anchor.
func (s *runService) remove() {
	t := s.t
	if t.Failed() {
		s.dumpDiagnostics()
	}
	if out, err := exec.Command("docker", "-H", s.host, "service", "rm", s.name).CombinedOutput(); err != nil {
		t.Errorf("docker service rm %s: %v\n%s", s.name, err, out)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		out, err := exec.Command("docker", "-H", s.host, "ps", "-aq", "--filter", "label=com.docker.swarm.service.name="+s.name).Output()
		if err == nil && strings.TrimSpace(string(out)) == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the containers of %s are still there 30 s after its removal", s.name)
			break
		}
		time.Sleep(100 * time.Millisecond) // poll for the containers to be removed
	}
	_ = exec.Command("docker", "-H", s.host, "service", "rm", s.anchor).Run()
}

// dumpDiagnostics logs the service's tasks and every one of its containers' logs (the
// supervisors' transitions). Each docker call is bounded: `docker service logs` can hang, so
// the containers' own logs are read instead.
func (s *runService) dumpDiagnostics() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run := func(args ...string) string {
		cmd := exec.CommandContext(ctx, "docker", append([]string{"-H", s.host}, args...)...)
		cmd.WaitDelay = time.Second
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Sprintf("%s(docker %v: %v)", out, args, err)
		}
		return string(out)
	}
	s.t.Logf("tasks of %s:\n%s", s.name, run("service", "ps", "--no-trunc", s.name))
	for _, id := range strings.Fields(run("ps", "-aq", "--filter", "label=com.docker.swarm.service.name="+s.name)) {
		s.t.Logf("logs of container %s:\n%s", id, run("logs", "--timestamps", id))
	}
}

// docker runs the docker CLI against the test Swarm, failing the test on error.
func (s *runService) docker(args ...string) string {
	s.t.Helper()
	return leasetest.Docker(s.t, s.host, args...)
}

// events reads the children's shared log.
func (s *runService) events() []check.ChildEvent {
	s.t.Helper()
	return readChildEvents(s.t, s.log)
}

// containers returns the short IDs (= hostnames) of the service's running containers.
func (s *runService) containers() []string {
	s.t.Helper()
	out := s.docker("ps", "--filter", "label=com.docker.swarm.service.name="+s.name, "--format", "{{.ID}}")
	ids := strings.Fields(out)
	slices.Sort(ids)
	return ids
}

// waitForContainers waits until exactly n of the service's containers run.
func (s *runService) waitForContainers(n int, timeout time.Duration) []string {
	s.t.Helper()
	var ids []string
	waitUntil(s.t, timeout, fmt.Sprintf("%d running containers of %s", n, s.name), func() (bool, string) {
		ids = s.containers()
		return len(ids) == n, fmt.Sprintf("running: %v", ids)
	})
	return ids
}

// waitForChildStart waits for a child's start event with a fence above fence, and returns it.
func (s *runService) waitForChildStart(timeout time.Duration, fence uint64) check.ChildEvent {
	s.t.Helper()
	var found check.ChildEvent
	waitForEvents(s.t, s.log, timeout, fmt.Sprintf("a child with a fence above %d", fence), func(events []check.ChildEvent) bool {
		for _, e := range events {
			if e.Event == "start" && fenceOf(s.t, e) > fence {
				found = e
				return true
			}
		}
		return false
	})
	return found
}

// anchorState is the election's record as the anchor service's labels hold it.
type anchorState struct {
	Namespace, HolderID, NodeID, TaskID, Fence string
}

// anchorState reads the anchor service's labels.
func (s *runService) anchorState() anchorState {
	s.t.Helper()
	out := s.docker("service", "inspect", "--format", `{{json .Spec.Labels}}`, s.anchor)
	var labels map[string]string
	if err := json.Unmarshal([]byte(out), &labels); err != nil {
		s.t.Fatalf("labels of %s: %q: %v", s.anchor, out, err)
	}
	return anchorState{
		Namespace: labels["lfp-swarm-lease.namespace"], HolderID: labels["lfp-swarm-lease.holder_id"],
		NodeID: labels["lfp-swarm-lease.node_id"], TaskID: labels["lfp-swarm-lease.task_id"], Fence: labels["lfp-swarm-lease.fence"],
	}
}

// expectAnchorHeldBy fails unless the anchor shows the child's term: its fence, task and the
// node's holder ID.
func (s *runService) expectAnchorHeldBy(child check.ChildEvent, when string) {
	s.t.Helper()
	want := anchorState{Namespace: s.name, HolderID: s.nodeID, NodeID: s.nodeID, TaskID: child.TaskID, Fence: child.Fence}
	if got := s.anchorState(); got != want {
		s.t.Fatalf("%s: anchor %s holds %+v, want the running child's term %+v", when, s.anchor, got, want)
	}
}

// liveChildren returns the start events of the children that neither logged their end nor
// were killed (killed: childKey → kill time), in start order.
func liveChildren(events []check.ChildEvent, killed map[string]time.Time) []check.ChildEvent {
	live := map[string]check.ChildEvent{}
	for _, e := range events {
		switch e.Event {
		case "start":
			live[e.Child()] = e
		case "stop", "exit":
			delete(live, e.Child())
		}
	}
	var out []check.ChildEvent
	for key, e := range live {
		if _, ok := killed[key]; !ok {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b check.ChildEvent) int { return cmp.Compare(a.At, b.At) })
	return out
}

// waitForOneLiveChild waits until exactly one child is alive, in one of the service's running
// containers, and returns it.
func (s *runService) waitForOneLiveChild(timeout time.Duration, killed map[string]time.Time) check.ChildEvent {
	s.t.Helper()
	var child check.ChildEvent
	waitUntil(s.t, timeout, "exactly one live child in a running container of "+s.name, func() (bool, string) {
		events := s.events()
		live := liveChildren(events, killed)
		if len(live) != 1 || !slices.Contains(s.containers(), live[0].Hostname) {
			return false, fmt.Sprintf("%d live children; containers %v; log:\n%s", len(live), s.containers(), check.DescribeEvents(events))
		}
		child = live[0]
		return true, ""
	})
	return child
}

// expectOnlyChild checks, over runSwarmQuiet of polling, that child stays the one live child.
func (s *runService) expectOnlyChild(child check.ChildEvent, killed map[string]time.Time) {
	s.t.Helper()
	for end := time.Now().Add(runSwarmQuiet); ; {
		events := s.events()
		if live := liveChildren(events, killed); len(live) != 1 || live[0].Child() != child.Child() {
			s.t.Fatalf("want only child %s (fence %s) alive; log:\n%s", child.Child(), child.Fence, check.DescribeEvents(events))
		}
		if time.Now().After(end) {
			return
		}
		time.Sleep(runSwarmPoll / 4) // the log's poll interval
	}
}

// waitUntil polls cond until it holds, or fails the test after timeout with cond's last
// description of what it saw.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, saw := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; %s", timeout, what, saw)
		}
		time.Sleep(50 * time.Millisecond) // poll interval
	}
}

// TestRunSwarmOneChild deploys three `run` replicas and checks that exactly one child runs, with
// the identity and fence discovered from its Swarm task and recorded on the anchor.
func TestRunSwarmOneChild(t *testing.T) {
	s := deployRunService(t)
	child := s.waitForOneLiveChild(5*time.Second, nil)
	taskLabel := s.docker("inspect", "--format", `{{index .Config.Labels "com.docker.swarm.task.id"}}`, child.Hostname)
	if child.TaskID == "" || child.TaskID != taskLabel {
		t.Fatalf("child's SWARM_LEASE_TASK_ID = %q, want its container's task ID %q", child.TaskID, taskLabel)
	}
	if child.HolderID != s.nodeID || child.NodeID != s.nodeID {
		t.Fatalf("child's holder/node = %q/%q, want the node ID %q", child.HolderID, child.NodeID, s.nodeID)
	}
	s.expectAnchorHeldBy(child, "one child running")
}

// TestRunSwarmKilledLeader kills the leader's container, again and again, at the default TTL of
// 30 s: Swarm reports its task failed within a fraction of a second — the container exited,
// and with it every process of it — and another replica's child starts at once with a higher
// fence, on that evidence, never alongside the killed one and long before the lease expires.
func TestRunSwarmKilledLeader(t *testing.T) {
	const ttl, kills = 30 * time.Second, 3
	s := deployRunServiceTTL(t, ttl)
	killed := map[string]time.Time{}
	leader := s.waitForOneLiveChild(5*time.Second, nil)
	for i := 0; i < kills; i++ {
		s.waitForContainers(runSwarmReplicas, 30*time.Second) // the last kill's replacement runs
		s.docker("kill", leader.Hostname)
		killed[leader.Child()] = time.Now()
		// On evidence, well under a second on an idle machine; the expiry would take 20 s or more.
		next := s.waitForChildStart(10*time.Second, fenceOf(t, leader))
		if next.Hostname == leader.Hostname {
			t.Fatalf("the killed container %s started a child again", leader.Hostname)
		}
		t.Logf("kill %d: takeover %v after the kill (TTL %v)", i+1, next.Time().Sub(killed[leader.Child()]).Round(time.Millisecond), ttl)
		s.expectOnlyChild(next, killed)
		checkOneChildAtATime(t, s.events(), killed)
		s.expectAnchorHeldBy(next, "after the takeover")
		leader = next
	}
}

// TestRunSwarmRollingRestart forces a rolling update of every replica: each stopped leader stops
// its child and releases, so a follower takes over at once, and no two children ever overlap.
func TestRunSwarmRollingRestart(t *testing.T) {
	s := deployRunService(t)
	leader := s.waitForOneLiveChild(5*time.Second, nil)
	before := s.containers()

	start := time.Now()
	s.docker("service", "update", "-d", "--force", s.name)
	waitUntil(t, 90*time.Second, "the rolling update of "+s.name+" to complete", func() (bool, string) {
		state := s.docker("service", "inspect", "--format", "{{if .UpdateStatus}}{{.UpdateStatus.State}}{{end}}", s.name)
		return state == "completed", "update state " + state
	})
	t.Logf("rolling update of %d replicas took %v", runSwarmReplicas, time.Since(start).Round(time.Millisecond))
	for _, c := range s.waitForContainers(runSwarmReplicas, 30*time.Second) {
		if slices.Contains(before, c) {
			t.Fatalf("container %s survived a forced update", c)
		}
	}
	child := s.waitForOneLiveChild(10*time.Second, nil)

	events := s.events()
	lives := checkOneChildAtATime(t, events, nil)
	if len(lives) < 2 {
		t.Fatalf("no handover during the rolling update:\n%s", check.DescribeEvents(events))
	}
	if n := countEvents(events, "stop"); n != len(lives)-1 {
		t.Fatalf("%d of %d replaced children logged their stop: each must be stopped by SIGTERM, not killed:\n%s", n, len(lives)-1, check.DescribeEvents(events))
	}
	// A stopped leader releases: the next child starts well before its lease could have expired.
	for i := 1; i < len(lives); i++ {
		gap := time.Duration(lives[i].Start - lives[i-1].Stop)
		t.Logf("handover %d: fence %d → %d after %v", i, lives[i-1].Fence, lives[i].Fence, gap.Round(time.Millisecond))
		if gap > runSwarmTTL/2 {
			t.Errorf("handover %d took %v: the stopped leader did not release its lease (TTL %v)", i, gap, runSwarmTTL)
		}
	}
	if lives[0].Child() != leader.Child() || lives[len(lives)-1].Child() != child.Child() {
		t.Fatalf("the first and last children are %s and %s, want %s and %s", lives[0].Child(), lives[len(lives)-1].Child(), leader.Child(), child.Child())
	}
	s.expectOnlyChild(child, nil)
	s.expectAnchorHeldBy(child, "after the rolling update")
}

// TestRunSwarmScale scales the service 3 → 1 → 3: a child keeps running (or the survivor's
// starts) on the way down, the new replicas do not start another on the way up, and children
// never overlap.
func TestRunSwarmScale(t *testing.T) {
	s := deployRunService(t)
	leader := s.waitForOneLiveChild(5*time.Second, nil)

	s.docker("service", "scale", "-d", s.name+"=1")
	survivor := s.waitForContainers(1, 30*time.Second)[0]
	child := s.waitForOneLiveChild(10*time.Second, nil)
	if child.Hostname != survivor {
		t.Fatalf("the live child runs in %s, not in the surviving container %s", child.Hostname, survivor)
	}
	if child.Child() == leader.Child() {
		t.Logf("scaled to 1: the leader survived; its child kept running")
	} else {
		t.Logf("scaled to 1: the leader was removed; the survivor's child took over (fence %s → %s)", leader.Fence, child.Fence)
	}

	s.docker("service", "scale", "-d", s.name+"="+strconv.Itoa(runSwarmReplicas))
	s.waitForContainers(runSwarmReplicas, 30*time.Second)
	s.expectOnlyChild(child, nil)
	if again := s.waitForOneLiveChild(time.Second, nil); again.Child() != child.Child() {
		t.Fatalf("scaling up replaced the running child %s by %s", child.Child(), again.Child())
	}
	checkOneChildAtATime(t, s.events(), nil)
	s.expectAnchorHeldBy(child, "after scaling 3 → 1 → 3")
}

// TestRunSwarmPausedLeader freezes the leader's container for twice the TTL: another replica's
// child starts with a higher fence meanwhile; once thawed, the old supervisor stops its child at
// once and never renews its old term. The time from unpause to the old child's stop is the
// window in which a thawed child lives beside the new one — what fencing tokens are for.
func TestRunSwarmPausedLeader(t *testing.T) {
	s := deployRunService(t)
	old := s.waitForOneLiveChild(5*time.Second, nil)
	const pause = 2 * runSwarmTTL

	paused := time.Now()
	s.docker("pause", old.Hostname)
	unpaused := false
	t.Cleanup(func() {
		if !unpaused {
			_ = exec.Command("docker", "-H", s.host, "unpause", old.Hostname).Run()
		}
	})
	next := s.waitForChildStart(pause-500*time.Millisecond, fenceOf(t, old))
	if next.Hostname == old.Hostname {
		t.Fatalf("the paused container %s started a child", old.Hostname)
	}
	took := next.Time().Sub(paused)
	t.Logf("takeover %v after the pause (TTL %v)", took.Round(time.Millisecond), runSwarmTTL)
	// A paused container is no evidence (its task stays running): the term expires first, a
	// TTL after the last renewal, which came at most a renew interval before the pause.
	if took < runSwarmTTL-runSwarmRenew {
		t.Fatalf("takeover %v after the pause, before the lease could expire (TTL %v, renewals every %v)", took, runSwarmTTL, runSwarmRenew)
	}
	// Time passing is what is tested here: the leader stays frozen well past its TTL.
	time.Sleep(time.Until(paused.Add(pause)))

	thawing := time.Now()
	s.docker("unpause", old.Hostname)
	thawed := time.Now()
	unpaused = true
	// Thawed past its deadline, the child gets SIGTERM and, with no grace left to give, SIGKILL
	// at once: it may not live to log its stop. Its end is then the supervisor's "child
	// stopped" line, logged once the guard saw every process of it gone.
	var ended time.Time
	pollUntil(t, 5*time.Second, "the thawed child's end", func() (bool, string) {
		for _, e := range s.events() {
			if e.Event == "stop" && e.Child() == old.Child() {
				ended = e.Time()
				return true, ""
			}
		}
		logs := s.docker("logs", old.Hostname)
		if at, ok := childStoppedAt(logs, old.Fence); ok {
			ended = at
			return true, ""
		}
		return false, logs
	})
	events := s.events()
	// The thaw happens while `docker unpause` runs: the window is at most the time from the
	// call to the child's end.
	window := ended.Sub(thawing)
	t.Logf("thawed child lived at most %v: its end came %v after `docker unpause` was called and %v after it returned (the call took %v)",
		window.Round(time.Millisecond), window.Round(time.Millisecond), ended.Sub(thawed).Round(time.Millisecond), thawed.Sub(thawing).Round(time.Millisecond))
	if window < 0 {
		t.Fatalf("the paused child logged its stop %v before the unpause: the container was not frozen", -window)
	}
	if window > runSwarmGrace {
		t.Errorf("the thawed child lived up to %v after unpause: want it stopped at once (well within the %v grace)", window, runSwarmGrace)
	}

	// Apart from the frozen stretch, one child at a time: the frozen child counts as ended when
	// it was paused, and its thawed window is the one measured above.
	var rest []check.ChildEvent
	for _, e := range events {
		if !(e.Child() == old.Child() && e.Event != "start") {
			rest = append(rest, e)
		}
	}
	killed := map[string]time.Time{old.Child(): paused}
	checkOneChildAtATime(t, rest, killed)
	if live := liveChildren(events, map[string]time.Time{old.Child(): ended}); len(live) != 1 || live[0].Child() != next.Child() {
		t.Fatalf("after the thaw the live children are %v, want only %s:\n%s", live, next.Child(), check.DescribeEvents(events))
	}

	// The old supervisor never renews its old term: the anchor stays with the new leader, also
	// after more than a renew interval has passed since the thaw.
	s.expectAnchorHeldBy(next, "right after the thaw")
	// Time passing is what is tested here: the thawed supervisor's renewal timer has fired.
	time.Sleep(time.Until(thawed.Add(2 * runSwarmRenew)))
	s.expectAnchorHeldBy(next, "two renew intervals after the thaw")
	s.expectOnlyChild(next, map[string]time.Time{old.Child(): ended})
	s.expectNoRenewalAfter(old, thawing)
}

// childStoppedAt finds, in a supervisor's log, the time of the "child stopped" line of the term
// with fence.
func childStoppedAt(logs, fence string) (time.Time, bool) {
	for _, line := range strings.Split(logs, "\n") {
		if !strings.Contains(line, `msg="child stopped"`) || !strings.Contains(line, " fence="+fence+" ") {
			continue
		}
		_, rest, ok := strings.Cut(line, "time=")
		if !ok {
			continue
		}
		stamp, _, _ := strings.Cut(rest, " ")
		if at, err := time.Parse(time.RFC3339Nano, stamp); err == nil {
			return at, true
		}
	}
	return time.Time{}, false
}

// expectNoRenewalAfter checks the supervisor log of child's container: its term ended (by
// deadline or loss) and no renewal of that term succeeded after since. Successful renewals
// are logged only when late ("renewed-late"), which any renewal after a freeze would be. After a
// thaw the guard's clock and run's reach the deadline together: when the guard's comes first,
// the command's stop at the deadline is what ends the term.
func (s *runService) expectNoRenewalAfter(child check.ChildEvent, since time.Time) {
	s.t.Helper()
	out, err := exec.Command("docker", "-H", s.host, "logs", child.Hostname).CombinedOutput()
	if err != nil {
		s.t.Fatalf("docker logs %s: %v\n%s", child.Hostname, err, out)
	}
	fence := "fence=" + child.Fence
	ended := false
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, fence) {
			continue
		}
		if strings.Contains(line, `msg="term ended"`) && (strings.Contains(line, "reason=deadline") || strings.Contains(line, "reason=lost")) ||
			strings.Contains(line, `msg="child stopped by its guard at the term's deadline"`) {
			ended = true
			s.t.Logf("the thawed supervisor: %s", line)
		}
		if strings.Contains(line, "msg=renewed-late") && logTime(line).After(since) {
			s.t.Errorf("the thawed supervisor renewed its old term: %s", line)
		}
	}
	if !ended {
		s.t.Errorf("the thawed supervisor's log has no end of its term with %s by deadline or loss:\n%s", fence, out)
	}
}

// logTime parses the time= field of a log/slog text line (zero if there is none).
func logTime(line string) time.Time {
	_, rest, ok := strings.Cut(line, "time=")
	if !ok {
		return time.Time{}
	}
	field, _, _ := strings.Cut(rest, " ")
	ts, _ := time.Parse(time.RFC3339Nano, field)
	return ts
}
