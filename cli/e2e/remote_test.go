package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// The elections client and `run --server` end to end: every server is a real `lfp-swarm-lease
// serve` process on the file store, every supervisor a real `run` process, every child the
// testchild. Nothing is mocked; the Go client's protocol edge cases are unit-tested in
// clients/go.

// remoteTTL is the shortest TTL of the elections API, used by every test here.
const remoteTTL = 5 * time.Second

// remoteMargin is the client's safety margin for remoteTTL (a tenth).
const remoteMargin = 500 * time.Millisecond

// remoteServer is one `serve` process with the elections API on a file store.
type remoteServer struct {
	*runProc
	base string // http://127.0.0.1:PORT
	addr string // 127.0.0.1:PORT
}

// startRemoteServer starts `serve` on the file store in dir, listening on listen, and returns it
// once it listens. extra adds settings (limits).
func startRemoteServer(t *testing.T, dir, listen string, extra ...string) *remoteServer {
	t.Helper()
	env := append([]string{
		"SWARM_LEASE_STORE=file://" + dir,
		"SWARM_LEASE_LISTEN=" + listen,
		"SWARM_LEASE_DEFAULT_POLL_MS=100",
		"DOCKER_HOST=unix:///nonexistent/docker.sock", // no Swarm task here: discovery fails fast
	}, extra...)
	p := startProc(t, "serve "+listen, env, "serve")
	deadline := time.Now().Add(15 * time.Second)
	for {
		if m := listeningPattern.FindStringSubmatch(p.out.String()); m != nil {
			return &remoteServer{runProc: p, base: "http://" + m[1], addr: m[1]}
		}
		select {
		case <-p.done:
			t.Fatalf("serve exited (%d) before it listened:\n%s", p.cmd.ProcessState.ExitCode(), p.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not log its listen address within 15 s:\n%s", p.out.String())
		}
		time.Sleep(10 * time.Millisecond) // poll interval of the log
	}
}

func remoteClient(t *testing.T, base string) *swarmlease.Client {
	t.Helper()
	el, err := swarmlease.NewClient(base, swarmlease.WithBackoff(20*time.Millisecond, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return el
}

// roomStates collects a WatchRoom in a goroutine; the channel closes when the watch ends.
func roomStates(ctx context.Context, el *swarmlease.Client, room string) <-chan swarmlease.RoomState {
	ch := make(chan swarmlease.RoomState, 100)
	go func() {
		defer close(ch)
		for st, err := range el.WatchRoom(ctx, room) {
			if err != nil {
				return
			}
			ch <- st
		}
	}()
	return ch
}

// expectRoomState waits for the next state of a watch and checks it against want ("vacant",
// or "leader CANDIDATE/TERM").
func expectRoomState(t *testing.T, ch <-chan swarmlease.RoomState, want string) {
	t.Helper()
	select {
	case st, ok := <-ch:
		if !ok {
			t.Fatalf("the watch ended; want %s", want)
		}
		got := string(st.Status)
		if st.Leader != nil {
			got = fmt.Sprintf("%s %s/%d", st.Status, st.Leader.CandidateID, st.Leader.Term)
		}
		if got != want {
			t.Fatalf("watch state %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no watch state within 10 s; want %s", want)
	}
}

// TestRemoteClientEndToEnd runs every call of the Go elections client against a real server:
// create, campaign (leader, follower, the leader again), renew, status, resign, the watch's
// frames, re-election with a higher term, and the typed errors of stale, foreign and malformed
// tokens and refused inputs — none of which shows a token.
func TestRemoteClientEndToEnd(t *testing.T) {
	srv := startRemoteServer(t, t.TempDir(), "127.0.0.1:0")
	el := remoteClient(t, srv.base)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	room, err := el.CreateRoom(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(room.ID) != 32 || room.WatchPath != "/elections/"+room.ID+"/watch" {
		t.Fatalf("room %+v", room)
	}
	watch := roomStates(ctx, el, room.ID)
	expectRoomState(t, watch, "vacant")

	a, err := el.Campaign(ctx, room.ID, swarmlease.CampaignRequest{CandidateID: "worker-a", TTL: remoteTTL, Metadata: "node 1"})
	if err != nil {
		t.Fatal(err)
	}
	if !a.IsLeader() || len(a.Token) != 43 || a.Leader.CandidateID != "worker-a" || a.Leader.Metadata != "node 1" ||
		a.RenewAfter != remoteTTL/2 || time.Until(a.Leader.ExpiresAt) > remoteTTL+time.Second {
		t.Fatalf("a's campaign: %+v", a)
	}
	term := a.Leader.Term
	expectRoomState(t, watch, fmt.Sprintf("leader worker-a/%d", term))

	b, err := el.Campaign(ctx, room.ID, swarmlease.CampaignRequest{CandidateID: "worker-b", TTL: remoteTTL})
	if err != nil {
		t.Fatal(err)
	}
	if b.IsLeader() || b.Token != "" || b.Leader.CandidateID != "worker-a" || b.Leader.Term != term ||
		b.RetryAfter <= 0 || b.RetryAfter > remoteTTL+2*time.Second {
		t.Fatalf("b's campaign: %+v", b)
	}
	again, err := el.Campaign(ctx, room.ID, swarmlease.CampaignRequest{CandidateID: "worker-a", TTL: remoteTTL})
	if err != nil || again.IsLeader() || again.Token != "" || again.Leader.Term != term {
		t.Fatalf("the leader campaigning again: %+v, %v (want a follower seeing itself)", again, err)
	}

	renewed, err := el.Renew(ctx, room.ID, a.Token, remoteTTL)
	if err != nil {
		t.Fatal(err)
	}
	if !renewed.IsLeader() || renewed.Token != a.Token || renewed.Leader.Term != term {
		t.Fatalf("renew: %+v", renewed)
	}
	st, err := el.Status(ctx, room.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != swarmlease.StatusLeader || st.Leader == nil || st.Leader.Term != term || st.Leader.CandidateID != "worker-a" || st.RetryAfter <= 0 {
		t.Fatalf("status: %+v", st)
	}

	prev, err := el.Resign(ctx, room.ID, a.Token)
	if err != nil || prev != term {
		t.Fatalf("resign: %d, %v; want %d", prev, err, term)
	}
	// The renewal moved expires_at (a frame), then the resignation emptied the room.
	for {
		select {
		case s := <-watch:
			if s.Status == swarmlease.StatusLeader && s.Leader.Term == term {
				continue // the renewal
			}
			if s.Status != swarmlease.StatusVacant {
				t.Fatalf("after the resignation the watch shows %+v", s)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the watch did not show the resignation")
		}
		break
	}
	if st, err := el.Status(ctx, room.ID); err != nil || st.Status != swarmlease.StatusVacant || st.Leader != nil {
		t.Fatalf("status after the resignation: %+v, %v", st, err)
	}

	var errs []error
	_, err = el.Renew(ctx, room.ID, a.Token, remoteTTL)
	expectCodeErr(t, err, "a stale token (vacant room)", 404, swarmlease.ErrVacant)
	errs = append(errs, err)

	b, err = el.Campaign(ctx, room.ID, swarmlease.CampaignRequest{CandidateID: "worker-b", TTL: remoteTTL})
	if err != nil || !b.IsLeader() || b.Leader.Term <= term {
		t.Fatalf("re-election: %+v, %v; want a term above %d", b, err, term)
	}
	expectRoomState(t, watch, fmt.Sprintf("leader worker-b/%d", b.Leader.Term))
	_, err = el.Renew(ctx, room.ID, a.Token, remoteTTL)
	expectCodeErr(t, err, "a stale token (another holder)", 400, swarmlease.ErrHeldByOther)
	errs = append(errs, err)
	_, err = el.Resign(ctx, room.ID, "not-a-token")
	expectCodeErr(t, err, "a malformed token", 400, swarmlease.ErrInvalidInput)
	errs = append(errs, err)
	_, err = el.Campaign(ctx, room.ID, swarmlease.CampaignRequest{CandidateID: "agent/a", TTL: remoteTTL})
	expectCodeErr(t, err, "candidate agent/a", 400, swarmlease.ErrInvalidInput)
	_, err = el.Campaign(ctx, room.ID, swarmlease.CampaignRequest{CandidateID: "worker-c", TTL: 301 * time.Second})
	expectCodeErr(t, err, "a TTL of 301 s", 400, swarmlease.ErrInvalidTTL)
	for _, err := range errs {
		if text := fmt.Sprintf("%v %+v", err, err); strings.Contains(text, string(a.Token)) || strings.Contains(text, string(b.Token)) {
			t.Fatalf("an error shows a token: %s", text)
		}
	}
	if _, err := el.Resign(ctx, room.ID, b.Token); err != nil {
		t.Fatal(err)
	}
}

// expectCodeErr checks that err is the server's *APIError with status, matching sentinel, and
// with a request id.
func expectCodeErr(t *testing.T, err error, what string, status int, sentinel error) {
	t.Helper()
	var apiErr *swarmlease.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != status || !errors.Is(err, sentinel) || !requestIDPattern.MatchString(apiErr.RequestID) {
		t.Fatalf("%s: %v (%+v), want HTTP %d matching %v with a request id", what, err, apiErr, status, sentinel)
	}
}

// TestRemoteClientLimits: the server's admission budget and active-room limit reach the client
// as ErrRateLimited and ErrCapacityExceeded with their Retry-After.
func TestRemoteClientLimits(t *testing.T) {
	srv := startRemoteServer(t, t.TempDir(), "127.0.0.1:0", "SWARM_LEASE_ADMISSION_PER_MINUTE=3", "SWARM_LEASE_MAX_ACTIVE_ROOMS=1")
	el := remoteClient(t, srv.base)
	ctx := context.Background()
	first, err := el.Campaign(ctx, "limits-room-1", swarmlease.CampaignRequest{CandidateID: "a", TTL: remoteTTL})
	if err != nil || !first.IsLeader() {
		t.Fatalf("first campaign: %+v, %v", first, err)
	}
	_, err = el.Campaign(ctx, "limits-room-2", swarmlease.CampaignRequest{CandidateID: "a", TTL: remoteTTL})
	expectCodeErr(t, err, "a second active room with capacity 1", 409, swarmlease.ErrCapacityExceeded)
	var apiErr *swarmlease.APIError
	if errors.As(err, &apiErr); apiErr.RetryAfter <= 0 {
		t.Fatalf("capacity_exceeded without Retry-After: %+v", apiErr)
	}
	if _, err := el.CreateRoom(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = el.CreateRoom(ctx)
	expectCodeErr(t, err, "the fourth budgeted request of 3 per minute", 429, swarmlease.ErrRateLimited)
	if errors.As(err, &apiErr); apiErr.RetryAfter < time.Second {
		t.Fatalf("rate_limited without Retry-After: %+v", apiErr)
	}
	// Renew, resign and status are never rate-limited: a leader is not stranded.
	if _, err := el.Renew(ctx, "limits-room-1", first.Token, remoteTTL); err != nil {
		t.Fatalf("renew under rate pressure: %v", err)
	}
	if _, err := el.Status(ctx, "limits-room-1"); err != nil {
		t.Fatalf("status under rate pressure: %v", err)
	}
	if _, err := el.Resign(ctx, "limits-room-1", first.Token); err != nil {
		t.Fatalf("resign under rate pressure: %v", err)
	}
}

// TestRemoteClientHoldHandover: two Holds on one room; the leader's Resign makes the follower —
// which follows the room's watch — win at once, with a higher term.
func TestRemoteClientHoldHandover(t *testing.T) {
	srv := startRemoteServer(t, t.TempDir(), "127.0.0.1:0")
	el := remoteClient(t, srv.base)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const room = "hold-handover"
	a, err := el.Hold(ctx, room, swarmlease.CampaignRequest{CandidateID: "a", TTL: remoteTTL})
	if err != nil {
		t.Fatal(err)
	}
	bLog := &syncBuffer{}
	elB, err := swarmlease.NewClient(srv.base, swarmlease.WithLogger(slog.New(slog.NewTextHandler(bLog, nil))))
	if err != nil {
		t.Fatal(err)
	}
	won := make(chan *swarmlease.Leadership, 1)
	go func() {
		b, err := elB.Hold(ctx, room, swarmlease.CampaignRequest{CandidateID: "b", TTL: remoteTTL})
		if err != nil {
			close(won)
			return
		}
		won <- b
	}()
	// b logs that it follows a once it campaigned and lost.
	pollUntil(t, 10*time.Second, "b to follow the room", func() (bool, string) {
		return strings.Contains(bLog.String(), "following"), bLog.String()
	})
	resigned := time.Now()
	if prev, err := a.Resign(ctx); err != nil || prev != a.Fence() {
		t.Fatalf("a resigns: %d, %v", prev, err)
	}
	select {
	case b, ok := <-won:
		if !ok {
			t.Fatal("b's Hold failed")
		}
		defer b.Resign(context.Background())
		took := time.Since(resigned)
		t.Logf("Hold handover: a resigned → b leads in %v (TTL %v)", took.Round(time.Millisecond), remoteTTL)
		if b.Fence() <= a.Fence() {
			t.Fatalf("b's term %d is not above a's %d", b.Fence(), a.Fence())
		}
		if took > 2*time.Second {
			t.Fatalf("b took %v to take over: it waited for the lease instead of the vacancy", took)
		}
	case <-time.After(remoteTTL + 5*time.Second):
		t.Fatal("b never took over")
	}
}

// remoteRunEnv is the environment of `run --server` processes contending for one room: TTL
// 5 s, grace 300 ms, a 100 ms pause after a child's exit, no Docker engine (none is needed).
func remoteRunEnv(t *testing.T, base, room string) (env []string, childLog string) {
	childLog = filepath.Join(t.TempDir(), "events.log")
	return []string{
		"SWARM_LEASE_SERVER=" + base,
		"SWARM_LEASE_ELECTION=" + room,
		"SWARM_LEASE_TTL_MS=5000",
		"SWARM_LEASE_SHUTDOWN_TIMEOUT_MS=300",
		"SWARM_LEASE_DEFAULT_POLL_MS=100",
		"DOCKER_HOST=unix:///nonexistent/docker.sock",
		"TESTCHILD_LOG=" + childLog,
	}, childLog
}

// childNamespaces reads the namespace each child was given, by PID.
func childNamespaces(t *testing.T, path string) map[int]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e struct {
			Event     string `json:"event"`
			PID       int    `json:"pid"`
			Namespace string `json:"namespace"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err == nil && e.Event == "start" {
			out[e.PID] = e.Namespace
		}
	}
	return out
}

var stoppedLine = regexp.MustCompile(`msg="child stopped".*?reason=(\S+).*?safety_deadline=(\S+)`)

// TestRemoteRunHandoverAndStepDown: two `run --server` supervisors on one room run exactly one
// child at a time; SIGTERM to the leader's supervisor hands over at once with a higher fence;
// SIGKILL to the elections server makes the leader stop its child by its own safety deadline
// (start of its last successful renewal + TTL − margin), before the lease could have expired on
// the server; and when the server comes back, the surviving supervisor leads again.
func TestRemoteRunHandoverAndStepDown(t *testing.T) {
	leasetest.Long(t, "runs supervisors through a handover and a step-down on a server's TTLs")
	store := t.TempDir()
	srv := startRemoteServer(t, store, "127.0.0.1:0")
	const room = "remote-run-room"
	env, childLog := remoteRunEnv(t, srv.base, room)
	procs := map[string]*runProc{}
	for _, h := range []string{"a", "b"} {
		procs[h] = startRun(t, append(env, "SWARM_LEASE_NODE_ID=node-"+h, "SWARM_LEASE_TASK_ID=task-"+h), h)
	}
	el := remoteClient(t, srv.base)
	ctx := context.Background()

	events := waitForEvents(t, childLog, 15*time.Second, "the first child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 1 })
	first := startsOf(events)[0]
	st, err := el.Status(ctx, room)
	if err != nil {
		t.Fatal(err)
	}
	if st.Leader == nil || st.Leader.CandidateID != first.HolderID || st.Leader.Term != fenceOf(t, first) {
		t.Fatalf("the server shows %+v, the child has holder %s fence %s", st.Leader, first.HolderID, first.Fence)
	}
	if first.NodeID != "node-"+first.HolderID || first.TaskID != "task-"+first.HolderID || childNamespaces(t, childLog)[first.PID] != room {
		t.Fatalf("child environment: %+v, namespace %q", first, childNamespaces(t, childLog)[first.PID])
	}
	// The follower campaigned and follows the room (its log says so) while one child runs.
	follower := procs[map[string]string{"a": "b", "b": "a"}[first.HolderID]]
	pollUntil(t, 10*time.Second, "the other supervisor to follow", func() (bool, string) {
		return strings.Contains(follower.out.String(), "following"), follower.out.String()
	})

	// Graceful handover: SIGTERM the leader's supervisor.
	leader := procs[first.HolderID]
	if err := leader.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	events = waitForEvents(t, childLog, 5*time.Second, "a second child after SIGTERM", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 2 })
	if code := leader.wait(t, 5*time.Second); code != 0 {
		t.Fatalf("the terminated supervisor exited %d, want 0", code)
	}
	if !strings.Contains(leader.out.String(), `msg=released`) {
		t.Fatalf("the terminated supervisor did not resign its term:\n%s", leader.out.String())
	}
	stop, _ := lastEvent(events, "stop")
	second := startsOf(events)[1]
	handover := second.Time().Sub(stop.Time())
	t.Logf("handover: old child stopped → new child started in %v (TTL %v)", handover.Round(time.Millisecond), remoteTTL)
	if handover > 2*time.Second {
		t.Fatalf("handover took %v: the follower waited for the lease to expire", handover)
	}
	if second.HolderID == first.HolderID || fenceOf(t, second) <= fenceOf(t, first) {
		t.Fatalf("second child %+v after first %+v: want the other holder and a higher fence", second, first)
	}

	// Step-down: once the new leader has renewed twice (the room's watch shows its expiry move
	// twice: it sent the second renewal, so it received the answer to the first), SIGKILL the
	// elections server. The leader can no longer renew; its child must be gone by the safety
	// deadline, measured from the start of its last successful renewal — which started before
	// the kill.
	survivor := procs[second.HolderID]
	wctx, stopWatch := context.WithTimeout(ctx, 3*remoteTTL)
	var expiries []time.Time
	for st := range roomStates(wctx, el, room) {
		if st.Leader != nil && st.Leader.Term == fenceOf(t, second) {
			if expiries = append(expiries, st.Leader.ExpiresAt); len(expiries) == 3 {
				break
			}
		}
	}
	stopWatch()
	if len(expiries) != 3 || !expiries[2].After(expiries[1]) || !expiries[1].After(expiries[0]) {
		t.Fatalf("no renewal seen on the server: %v", expiries)
	}
	killedAt := time.Now()
	if err := srv.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-srv.done
	events = waitForEvents(t, childLog, remoteTTL+5*time.Second, "the leader's child to stop without the server",
		func(ev []check.ChildEvent) bool { return countEvents(ev, "stop") >= 2 })
	stop, _ = lastEvent(events, "stop")
	if stop.PID != second.PID {
		t.Fatalf("unexpected stop %+v", stop)
	}
	waitGone(t, second.PID, 2*time.Second, "the leader's child without the server")
	var m []string
	pollUntil(t, 5*time.Second, "the supervisor's child-stopped line", func() (bool, string) {
		m = stoppedLine.FindStringSubmatch(survivor.out.String())
		return m != nil, survivor.out.String()
	})
	deadline, err := time.Parse(time.RFC3339Nano, m[2])
	if err != nil {
		t.Fatalf("safety_deadline %q: %v", m[2], err)
	}
	t.Logf("server killed → child stopped in %v; safety deadline %v after the kill (the last successful request started ≥ %v before it); child stopped %v before the deadline (grace 300 ms)",
		stop.Time().Sub(killedAt).Round(time.Millisecond), deadline.Sub(killedAt).Round(time.Millisecond),
		(remoteTTL - remoteMargin - deadline.Sub(killedAt)).Round(time.Millisecond), deadline.Sub(stop.Time()).Round(time.Millisecond))
	if m[1] != "deadline" {
		t.Fatalf("the term ended by %q, want deadline:\n%s", m[1], survivor.out.String())
	}
	// The deadline is the last successful request's start + TTL − margin; that start preceded
	// the kill, so the deadline does too by at least the margin.
	if latest := killedAt.Add(remoteTTL - remoteMargin).Add(5 * time.Millisecond); deadline.After(latest) {
		t.Fatalf("safety deadline %v after the kill, beyond the TTL minus the margin: it does not run from a request's start", deadline.Sub(killedAt))
	}
	// And it runs from a renewal, not from the winning campaign: the first renewal started at
	// least 0.8 × TTL/3 (the default interval less its jitter) after the campaign did.
	if earliest := second.Time().Add(remoteTTL - remoteMargin + remoteTTL*4/15); deadline.Before(earliest.Add(-100 * time.Millisecond)) {
		t.Fatalf("safety deadline %v after the term began: the renewal did not move it", deadline.Sub(second.Time()))
	}
	if !stop.Time().Before(deadline) {
		t.Fatalf("the child stopped %v after the safety deadline", stop.Time().Sub(deadline))
	}
	if !stop.Time().Before(killedAt.Add(remoteTTL)) {
		t.Fatalf("the child stopped %v after the kill, not within the TTL", stop.Time().Sub(killedAt))
	}

	// The server comes back on the same address and store: the survivor leads again, with a
	// higher fence.
	restarted := startRemoteServer(t, store, srv.addr)
	events = waitForEvents(t, childLog, 45*time.Second, "a child after the server came back", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 3 })
	third := startsOf(events)[2]
	t.Logf("server restarted → new child in %v", third.Time().Sub(restarted.startedAt(t)).Round(time.Millisecond))
	if fenceOf(t, third) <= fenceOf(t, second) || third.HolderID != second.HolderID {
		t.Fatalf("third child %+v after second %+v", third, second)
	}
	checkOneChildAtATime(t, events, nil)
}

// startedAt is when the server logged that it listens.
func (s *remoteServer) startedAt(t *testing.T) time.Time {
	t.Helper()
	for _, line := range strings.Split(s.out.String(), "\n") {
		if strings.Contains(line, "msg=listening") {
			if ts, ok := strings.CutPrefix(strings.Fields(line)[0], "time="); ok {
				if at, err := time.Parse(time.RFC3339Nano, ts); err == nil {
					return at
				}
			}
		}
	}
	t.Fatalf("no listening line:\n%s", s.out.String())
	return time.Time{}
}

// TestRemoteRunOnceAndSettings: --once passes the child's code and resigns; settings the
// elections API cannot take are usage errors (exit 2) naming the setting, without any Docker
// engine.
func TestRemoteRunOnceAndSettings(t *testing.T) {
	srv := startRemoteServer(t, t.TempDir(), "127.0.0.1:0")
	const room = "remote-once-room"
	env, childLog := remoteRunEnv(t, srv.base, room)

	p := startRun(t, append(env, "TESTCHILD_EXIT_AFTER_MS=100", "TESTCHILD_EXIT_CODE=7"), "a", "--once")
	if code := p.wait(t, 15*time.Second); code != 7 {
		t.Fatalf("run --once exited %d, want the child's 7", code)
	}
	if n := countEvents(readChildEvents(t, childLog), "start"); n != 1 {
		t.Fatalf("%d children, want 1", n)
	}
	if st, err := remoteClient(t, srv.base).Status(context.Background(), room); err != nil || st.Status != swarmlease.StatusVacant {
		t.Fatalf("after run --once the room is %+v, %v; want vacant (resigned)", st, err)
	}

	// The candidate id defaults to the hostname, made valid.
	p = startProc(t, "run hostname", append(env, "HOSTNAME=web 1/☃", "TESTCHILD_EXIT_AFTER_MS=100"), "run", "--once", "--", testChild(t))
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("run --once exited %d", code)
	}
	events := readChildEvents(t, childLog)
	if last, _ := lastEvent(events, "start"); last.HolderID != "web-1----" {
		t.Fatalf("candidate id from the hostname: %q, want %q", last.HolderID, "web-1----")
	}

	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"no election", []string{"SWARM_LEASE_SERVER=" + srv.base}, nil, []string{"no election", "SWARM_LEASE_ELECTION", "--election"}},
		{"flags", nil, []string{"--server", srv.base, "--election", "bad id"}, []string{"invalid election", "flag --election"}},
		{"ttl", append(env, "SWARM_LEASE_TTL_MS=2500"), nil, []string{"invalid ttl_ms 2500", "whole seconds", "SWARM_LEASE_TTL_MS"}},
		{"timing", append(env, "SWARM_LEASE_SHUTDOWN_TIMEOUT_MS=3000"), nil, []string{"shutdown_timeout_ms", "renew_interval_ms", "ttl_ms"}},
		{"candidate", append(env, "SWARM_LEASE_HOLDER_ID=agent/a"), nil, []string{"invalid holder_id", "candidate id"}},
		{"server", []string{"SWARM_LEASE_SERVER=ftp://elect:8080", "SWARM_LEASE_ELECTION=" + room}, nil, []string{"invalid server", "http://HOST:PORT"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"run"}, tc.args...), "--", testChild(t))
			r := cli(t, append(tc.env, "DOCKER_HOST=unix:///nonexistent/docker.sock"), args...)
			expectCode(t, r, 2, tc.name)
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("error %q does not mention %q", r.stderr, w)
				}
			}
			if strings.Contains(strings.ToLower(r.stderr), "docker") {
				t.Errorf("the remote mode needed Docker: %s", r.stderr)
			}
		})
	}
}
