package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore/etcdtest"
)

// A frozen etcd member (SIGSTOP: its connections stay open, nothing answers) while `run`
// supervisors contend on a cluster of three etcd processes, quorum intact. Every request the
// supervisors send is bounded by what it is for and goes to another member when its member does
// not answer, so a frozen member costs an election at most one Raft election of etcd plus one
// TTL — never two — and a holder keeps its term through it.

// Timings of the frozen-member tests: the TTL of the measurements, the default request timeout
// (longer than the TTL) and poll interval; the grace period of the other `run` tests.
const (
	frozenTTL   = 3 * time.Second
	frozenGrace = 300 * time.Millisecond
	frozenPoll  = time.Second // the default
	frozenRenew = frozenTTL / 3
)

// frozenEnv is the environment of `run` supervisors of one election on cluster.
func frozenEnv(t *testing.T, cluster *etcdtest.Cluster) (env []string, childLog string) {
	env, childLog = etcdRunEnv(t, etcdURL(t, cluster.Endpoints()...))
	env = slices.DeleteFunc(env, func(kv string) bool {
		return strings.HasPrefix(kv, "SWARM_LEASE_TTL_MS=") || strings.HasPrefix(kv, "SWARM_LEASE_DEFAULT_POLL_MS=") ||
			strings.HasPrefix(kv, "SWARM_LEASE_MAX_CLOCK_SKEW_MS=") || strings.HasPrefix(kv, "SWARM_LEASE_SHUTDOWN_TIMEOUT_MS=")
	})
	return append(env, "SWARM_LEASE_TTL_MS="+strconv.FormatInt(frozenTTL.Milliseconds(), 10),
		"SWARM_LEASE_SHUTDOWN_TIMEOUT_MS="+strconv.FormatInt(frozenGrace.Milliseconds(), 10)), childLog
}

// freezeEtcdLeader freezes the member the others name as their leader and returns it, thawed at the
// end of the test if still frozen.
func freezeEtcdLeader(t *testing.T, cluster *etcdtest.Cluster) *etcdtest.Member {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	l, err := cluster.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	freeze(t, l)
	return l
}

// freeze stops m (SIGSTOP); it is continued at the end of the test if still stopped.
func freeze(t *testing.T, m *etcdtest.Member) {
	t.Helper()
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Continue() })
}

// thaw continues m and waits until it answers again.
func thaw(t *testing.T, m *etcdtest.Member) {
	t.Helper()
	if err := m.Continue(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := m.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestEtcdFrozenLeaderDuringHandover: the etcd Raft leader is frozen as the leading `run` is
// told to stop (SIGTERM), so that its handover goes to a cluster electing a new leader; the
// time from the old command's stop to the new command's start — no command running — is at
// most the TTL plus 1.5 s, in each of five tries.
func TestEtcdFrozenLeaderDuringHandover(t *testing.T) {
	const tries = 5
	const bound = frozenTTL + 1500*time.Millisecond
	cluster := etcdtest.StartCluster(t, 3)
	env, childLog := frozenEnv(t, cluster)
	procs := map[string]*runProc{}
	started := 0
	contender := func() {
		started++
		holder := "r" + strconv.Itoa(started)
		procs[holder] = startRun(t, env, holder)
	}
	contender()
	contender()
	events := waitForEvents(t, childLog, 20*time.Second, "the first child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 1 })
	var figures []string
	for try := 1; try <= tries; try++ {
		starts := countEvents(events, "start")
		leader := startsOf(events)[starts-1]
		// The follower follows and is registered, and the leader renews after that (so that
		// the successors its renewal reads name the follower).
		for holder, p := range procs {
			if holder != leader.HolderID {
				pollUntil(t, 20*time.Second, holder+" to follow", func() (bool, string) {
					return strings.Contains(p.out.String(), "msg=following"), p.out.String()
				})
				waitRegistered(t, env, holder)
			}
		}
		time.Sleep(frozenRenew + time.Duration(try)*frozenRenew/tries) // a phase against the renewals, not a synchronisation
		member := freezeEtcdLeader(t, cluster)
		frozen := time.Now()
		old := procs[leader.HolderID]
		if err := old.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		events = waitForEvents(t, childLog, 3*frozenTTL+10*time.Second, "a new child after the handover", func(ev []check.ChildEvent) bool {
			return countEvents(ev, "start") > starts
		})
		next := startsOf(events)[starts]
		stop, ok := lastEvent(events, "stop")
		if !ok || stop.PID != leader.PID {
			t.Fatalf("try %d: no stop of the leader's child before the next start:\n%s", try, check.DescribeEvents(events))
		}
		leaderless := next.Time().Sub(stop.Time())
		figures = append(figures, leaderless.Round(time.Millisecond).String())
		t.Logf("try %d: etcd leader %s frozen; %s's child stopped → %s's child started in %v (freeze → start %v)",
			try, member.Name, leader.HolderID, next.HolderID, leaderless.Round(time.Millisecond), next.Time().Sub(frozen).Round(time.Millisecond))
		if leaderless > bound {
			t.Errorf("try %d: no command ran for %v, want at most %v (TTL + 1.5 s)", try, leaderless.Round(time.Millisecond), bound)
		}
		thaw(t, member)
		if code := old.wait(t, 20*time.Second); code != 0 {
			t.Fatalf("try %d: the stopped supervisor exited %d, want 0", try, code)
		}
		delete(procs, leader.HolderID)
		contender()
	}
	checkOneChildAtATime(t, readChildEvents(t, childLog), nil)
	t.Logf("no command running during a handover with a frozen etcd leader (TTL %v): %s", frozenTTL, strings.Join(figures, ", "))
}

// TestEtcdFrozenMemberDuringRenewals: a member of etcd frozen for two TTLs while a `run` holds
// the lease and another follows — the Raft leader, then a follower member: the holder keeps its
// term (its command runs on, nobody else's starts), and the follower's view of the election,
// read from the store, never falls further behind the holder's renewals than a renew interval,
// a poll interval (a follower that no notification wakes reads once per poll interval: its view
// is that old with every member healthy) and 1.5 s — not the 5 s request timeout of a read that
// waits on the frozen member.
func TestEtcdFrozenMemberDuringRenewals(t *testing.T) {
	cluster := etcdtest.StartCluster(t, 3)
	env, childLog := frozenEnv(t, cluster)
	procs := map[string]*apiProc{"a": startRunAPI(t, env, "a")}
	waitForEvents(t, childLog, 20*time.Second, "the first child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 1 })
	procs["b"] = startRunAPI(t, env, "b")
	pollUntil(t, 20*time.Second, "b to follow", func() (bool, string) {
		return strings.Contains(procs["b"].out.String(), "msg=following"), procs["b"].out.String()
	})
	const staleBound = frozenRenew + frozenPoll + 1500*time.Millisecond
	for _, which := range []string{"leader", "follower"} {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		l, err := cluster.Leader(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		member := l
		if which == "follower" {
			i := slices.Index(cluster.Members(), l)
			member = cluster.Members()[(i+1)%len(cluster.Members())]
		}
		before := readChildEvents(t, childLog)
		holder := startsOf(before)[countEvents(before, "start")-1]
		follower := procs["a"]
		if holder.HolderID == "a" {
			follower = procs["b"]
		}
		freeze(t, member)
		frozen := time.Now()
		stalest := time.Duration(0)
		for time.Since(frozen) < 2*frozenTTL {
			stalest = max(stalest, followerStaleness(t, follower.base))
			time.Sleep(50 * time.Millisecond) // sampling the follower's view, not a synchronisation
		}
		thaw(t, member)
		events := readChildEvents(t, childLog)
		if len(events) != len(before) {
			t.Errorf("etcd %s %s frozen for %v: the holder lost its term:\n%s", which, member.Name, 2*frozenTTL, check.DescribeEvents(events))
			waitForEvents(t, childLog, 3*frozenTTL, "a child", func(ev []check.ChildEvent) bool { return len(liveChildren(ev, nil)) == 1 })
		} else {
			t.Logf("etcd %s %s frozen for %v: %s kept its term", which, member.Name, 2*frozenTTL, holder.HolderID)
		}
		t.Logf("etcd %s %s frozen: the follower's view of the election at most %v behind the holder's renewals", which, member.Name, stalest.Round(time.Millisecond))
		if stalest > staleBound {
			t.Errorf("etcd %s frozen: the follower's view of the election fell %v behind the holder's renewals, want at most %v",
				which, stalest.Round(time.Millisecond), staleBound)
		}
	}
}

// followerStaleness is how long ago the renewal that the follower serving base last read was
// written (one host: one wall clock).
func followerStaleness(t *testing.T, base string) time.Duration {
	t.Helper()
	resp, body := call(t, http.MethodGet, base+"/v1/state", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/state: %d %s", resp.StatusCode, body)
	}
	var st struct {
		RenewedAt *time.Time `json:"renewed_at"`
	}
	if err := json.Unmarshal(body, &st); err != nil || st.RenewedAt == nil {
		t.Fatalf("GET /v1/state: %s (%v)", body, err)
	}
	return time.Since(*st.RenewedAt)
}
