package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore/etcdtest"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// The etcd store end to end: the one-shots, `run` and `serve` as processes of the built binary
// on a real etcd — in this process (etcdtest.Embedded) where only the store matters, a cluster
// of etcd processes (etcdtest.StartCluster, Debian's etcd; under CI=true a missing one fails)
// where members die. Every test keeps its keys under a prefix of its own.

// etcdURL is the store setting of endpoints under a prefix of the test's own.
func etcdURL(t *testing.T, endpoints ...string) string {
	return "etcd://" + strings.Join(endpoints, ",") + "/" + leasetest.Namespace(t)
}

// etcdStore is a store on an etcd of the test's own, in this process.
func etcdStore(t *testing.T) storeEnv {
	return storeEnv{name: "etcd", env: []string{"SWARM_LEASE_STORE=" + etcdURL(t, etcdtest.Embedded(t))}, clockFences: true}
}

// etcdRunEnv is fileRunEnv on the etcd store URL: TTL 2 s, grace 300 ms, poll 100 ms.
func etcdRunEnv(t *testing.T, store string) (env []string, childLog string) {
	env, childLog = fileRunEnv(t)
	for i, kv := range env {
		if strings.HasPrefix(kv, "SWARM_LEASE_STORE=") {
			env[i] = "SWARM_LEASE_STORE=" + store
		}
	}
	return env, childLog
}

// waitRegistered waits until the etcd election of env has holder's successor registration: a
// leader told to stop hands its term only to a follower whose registration it can read, and a
// follower registers beside its first campaign, not before it.
func waitRegistered(t *testing.T, env []string, holder string) {
	t.Helper()
	st, err := etcdstore.Open(envValue(env, "SWARM_LEASE_STORE"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ns := envValue(env, "SWARM_LEASE_NAMESPACE")
	pollUntil(t, 10*time.Second, holder+"'s successor registration", func() (bool, string) {
		list, err := st.Successors(t.Context(), ns)
		return slices.ContainsFunc(list, func(s lease.Successor) bool { return s.Identity.HolderID == holder }),
			fmt.Sprintf("registered: %v, read error: %v", list, err)
	})
}

// TestEtcdOneShotLifecycle: init, try-acquire, renew, release, inspect and destroy as separate
// processes on etcd, with the exit codes of a held election and a foreign fence; after destroy
// and re-creation the fence is above every fence issued before.
func TestEtcdOneShotLifecycle(t *testing.T) {
	testLifecycle(t, etcdStore(t))
}

// TestEtcdUnreachable: with no member answering, a one-shot exits 5 (store unreachable) once
// its request timeout has passed, naming the endpoint; nothing waits for the cluster at start.
func TestEtcdUnreachable(t *testing.T) {
	ports, err := etcdtest.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	ep := "127.0.0.1:" + strconv.Itoa(ports[0])
	start := time.Now()
	r := cli(t, []string{"SWARM_LEASE_STORE=etcd://" + ep, "SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=a",
		"SWARM_LEASE_ETCD_DIAL_TIMEOUT_MS=300", "SWARM_LEASE_ETCD_REQUEST_TIMEOUT_MS=500"}, "try-acquire", "--json")
	expectCode(t, r, 5, "try-acquire without etcd")
	if out := decode[struct{ Code, Error string }](t, r); out.Code != "store_unreachable" || !strings.HasPrefix(out.Error, "cannot reach etcd store "+ep) {
		t.Errorf("--json: %s", r.stdout)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("try-acquire took %v with a 500 ms request timeout", took)
	}
}

// TestEtcdRunHandoverAndFailover: `run` supervisors on one etcd election run one child at a
// time; SIGTERM to the leader's supervisor hands over at once with a higher fence; after SIGKILL
// to the next leader's supervisor (its child dies with it), the survivor takes over on the
// evidence that the dead holder's processes are gone — before its lease expires, never before
// its child's end.
func TestEtcdRunHandoverAndFailover(t *testing.T) {
	const ttl, renew = 2 * time.Second, 2 * time.Second / 3
	env, childLog := etcdRunEnv(t, etcdURL(t, etcdtest.Embedded(t)))
	procs := map[string]*runProc{"a": startRun(t, env, "a"), "b": startRun(t, env, "b")}
	events := waitForEvents(t, childLog, 10*time.Second, "the first child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 1 })
	first := startsOf(events)[0]
	if !strings.Contains(procs[first.HolderID].out.String(), "store=\"etcd store 127.0.0.1:") {
		t.Errorf("run does not log the etcd store:\n%s", procs[first.HolderID].out.String())
	}

	// Graceful handover: SIGTERM the leader's supervisor; it hands the lease to the other, a
	// registered successor, in the write that ends its term.
	leader := procs[first.HolderID]
	for holder := range procs {
		if holder != first.HolderID {
			waitRegistered(t, env, holder)
		}
	}
	if err := leader.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	events = waitForEvents(t, childLog, 5*time.Second, "a second child after SIGTERM", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 2 })
	if code := leader.wait(t, 5*time.Second); code != 0 {
		t.Fatalf("the terminated supervisor exited %d, want 0", code)
	}
	stop, ok := lastEvent(events, "stop")
	if !ok {
		t.Fatalf("no stop of the first child:\n%s", check.DescribeEvents(events))
	}
	second := startsOf(events)[1]
	if second.HolderID == first.HolderID {
		t.Fatalf("the terminated supervisor's identity leads again")
	}
	// The lease's expiry comes about TTL − renew interval after the stop at the soonest, and a
	// start by expiry later still; the leader's log below is what proves the handover.
	if d := second.Time().Sub(stop.Time()); d >= ttl-renew {
		t.Fatalf("handover took %v: the lease was not handed over", d)
	}
	if out := leader.out.String(); !strings.Contains(out, `msg="handed over" namespace=`) || !strings.Contains(out, "successor_holder_id="+second.HolderID) {
		t.Errorf("the terminated supervisor did not hand over to %s:\n%s", second.HolderID, out)
	}
	t.Logf("graceful handover: old child stopped → new child started in %v", second.Time().Sub(stop.Time()))

	// Crash: a third supervisor follows; SIGKILL the leader's.
	procs["c"] = startRun(t, env, "c")
	// c follows (its log says so) before the leader dies, so that it saw the lease renewed.
	pollUntil(t, 10*time.Second, "c to follow", func() (bool, string) {
		return strings.Contains(procs["c"].out.String(), "msg=following"), procs["c"].out.String()
	})
	crashed := procs[second.HolderID]
	killedAt := time.Now()
	if err := crashed.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, second.PID, 5*time.Second, "the killed supervisor's child")
	events = waitForEvents(t, childLog, 10*time.Second, "a third child after SIGKILL", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 3 })
	third := startsOf(events)[2]
	took := third.Time().Sub(killedAt)
	t.Logf("crash failover: SIGKILL → new child in %v (TTL %v)", took, ttl)
	if third.HolderID != "c" {
		t.Fatalf("holder %s took over, want c", third.HolderID)
	}
	// On this host the killed supervisor's lock proves it gone once its guard has stopped the
	// child: c takes over then, before the lease expires (about TTL − renew interval after the
	// kill at the soonest) — never before the child's end. c's log below names the evidence.
	if took >= ttl-renew {
		t.Fatalf("c took over %v after the kill, want it on evidence, before the lease could expire (%v after it)", took, ttl-renew)
	}
	if !strings.Contains(procs["c"].out.String(), "evidence=") {
		t.Errorf("c's log names no evidence:\n%s", procs["c"].out.String())
	}
	checkOneChildAtATime(t, events, map[string]time.Time{second.Child(): killedAt})
}

// TestEtcdRunStepsDownWithoutQuorum: on a cluster of three etcd processes, the leader's `run`
// stops its child within the TTL of losing two members (no quorum: it cannot renew), no
// supervisor starts a child while the quorum is gone, and once a member is back a child runs
// again with a higher fence.
func TestEtcdRunStepsDownWithoutQuorum(t *testing.T) {
	const ttl = 2 * time.Second
	cluster := etcdtest.StartCluster(t, 3)
	env, childLog := etcdRunEnv(t, etcdURL(t, cluster.Endpoints()...))
	env = append(env, "SWARM_LEASE_ETCD_REQUEST_TIMEOUT_MS=1000")
	startRun(t, env, "a")
	startRun(t, env, "b")
	waitForEvents(t, childLog, 15*time.Second, "the first child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 1 })
	members := cluster.Members()
	for _, m := range members[:2] {
		if err := m.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	lost := time.Now() // the second member is gone: from here no renewal can commit
	events := waitForEvents(t, childLog, 2*ttl, "the child to stop without quorum", func(ev []check.ChildEvent) bool { return countEvents(ev, "stop") >= 1 })
	stop, ok := lastEvent(events, "stop")
	if !ok {
		t.Fatalf("no stop of the child:\n%s", check.DescribeEvents(events))
	}
	if d := stop.Time().Sub(lost); d > ttl {
		t.Fatalf("the child stopped %v after the quorum was lost; want within the %v TTL", d, ttl)
	}
	t.Logf("quorum lost → child stopped in %v", stop.Time().Sub(lost))
	// Two TTLs without quorum: nobody can win a term, so no child starts.
	time.Sleep(2 * ttl) // the span observed, not a synchronisation
	if n := countEvents(readChildEvents(t, childLog), "start"); n != 1 {
		t.Fatalf("%d children started while the quorum was lost:\n%s", n, check.DescribeEvents(readChildEvents(t, childLog)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := members[0].Restart(ctx); err != nil {
		t.Fatal(err)
	}
	events = waitForEvents(t, childLog, 15*time.Second, "a child once the quorum is back", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 2 })
	checkOneChildAtATime(t, events, nil)
}

// TestEtcdServeReplicasAreOneService: two `serve` processes on one etcd are one elections
// service: a room won through one is a follower's through the other; a watch through one sees
// the other's resignation; the leader renews and resigns through the other, with the other
// one killed. Both say that the active-room limit and the shard count are etcd's defaults.
func TestEtcdServeReplicasAreOneService(t *testing.T) {
	env := append([]string{"SWARM_LEASE_LISTEN=127.0.0.1:0"}, etcdStore(t).env...)
	a := startServe(t, env, "replica a")
	b := startServe(t, env, "replica b")
	for _, p := range []*apiProc{a, b} {
		for _, want := range []string{"max_active_rooms=" + strconv.Itoa(rooms.DefaultMaxActiveRoomsIndividual),
			"room_shards=" + strconv.Itoa(rooms.DefaultShardsIndividual)} {
			if !strings.Contains(p.out.String(), want) {
				t.Errorf("%s does not log %s:\n%s", p.name, want, p.out.String())
			}
		}
	}
	id := rooms.NewRoomID()
	room := "/elections/" + id
	code, won := postElection(t, a.base, room+"/campaign", `{"candidate_id":"worker-a","ttl_seconds":30}`)
	if code != http.StatusOK || won.Status != "leader" {
		t.Fatalf("campaign through a: %d %+v", code, won)
	}
	if code, f := postElection(t, b.base, room+"/campaign", `{"candidate_id":"worker-b","ttl_seconds":30}`); code != http.StatusOK || f.Status != "follower" || f.Leader.Term != won.Leader.Term {
		t.Fatalf("campaign through b: %d %+v", code, f)
	}
	// A watch through b follows what happens through a.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch := roomStates(ctx, remoteClient(t, b.base), id)
	awaitRoomState(t, watch, "leader worker-a/"+strconv.FormatUint(won.Leader.Term, 10))
	code, again := postElection(t, a.base, room+"/campaign", `{"candidate_id":"worker-c","ttl_seconds":30}`)
	if code != http.StatusOK || again.Status != "follower" {
		t.Fatalf("another campaign through a: %d %+v", code, again)
	}
	if code, r := postElection(t, a.base, room+"/resign", `{"leader_token":"`+won.LeaderToken+`"}`); code != http.StatusOK || r.PreviousTerm != won.Leader.Term {
		t.Fatalf("resign through a: %d %+v", code, r)
	}
	awaitRoomState(t, watch, "vacant")
	code, c := postElection(t, a.base, room+"/campaign", `{"candidate_id":"worker-c","ttl_seconds":30}`)
	if code != http.StatusOK || c.Status != "leader" || c.Leader.Term <= won.Leader.Term {
		t.Fatalf("campaign after resign: %d %+v", code, c)
	}
	awaitRoomState(t, watch, "leader worker-c/"+strconv.FormatUint(c.Leader.Term, 10))
	// The state lives in etcd, not in a replica: with a gone, b renews and resigns a's grant.
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	a.wait(t, 10*time.Second)
	if code, r := postElection(t, b.base, room+"/renew", `{"leader_token":"`+c.LeaderToken+`"}`); code != http.StatusOK || r.Leader.Term != c.Leader.Term {
		t.Fatalf("renew through b: %d %+v", code, r)
	}
	if code, r := postElection(t, b.base, room+"/resign", `{"leader_token":"`+c.LeaderToken+`"}`); code != http.StatusOK || r.PreviousTerm != c.Leader.Term {
		t.Fatalf("resign through b: %d %+v", code, r)
	}
	awaitRoomState(t, watch, "vacant")
}

// awaitRoomState waits for a state of a watch that is want ("vacant", or "leader
// CANDIDATE/TERM"), skipping others (a renewal's).
func awaitRoomState(t *testing.T, ch <-chan swarmlease.RoomState, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	var seen []string
	for {
		select {
		case st, ok := <-ch:
			if !ok {
				t.Fatalf("the watch ended after %q; want %s", seen, want)
			}
			got := string(st.Status)
			if st.Leader != nil {
				got = fmt.Sprintf("%s %s/%d", st.Status, st.Leader.CandidateID, st.Leader.Term)
			}
			if got == want {
				return
			}
			seen = append(seen, got)
		case <-deadline:
			t.Fatalf("no watch state %s within 10 s; saw %q", want, seen)
		}
	}
}

// TestEtcdServeReadyzFollowsQuorum: serve's /readyz reads the cluster: ready with three
// members, 503 not_ready once two are killed (no quorum), ready again when one is back — while
// /healthz, which never calls the store, answers throughout.
func TestEtcdServeReadyzFollowsQuorum(t *testing.T) {
	cluster := etcdtest.StartCluster(t, 3)
	s := startServe(t, []string{"SWARM_LEASE_LISTEN=127.0.0.1:0", "SWARM_LEASE_STORE=" + etcdURL(t, cluster.Endpoints()...),
		"SWARM_LEASE_ETCD_REQUEST_TIMEOUT_MS=1000"}, "serve")
	status := func(path string) func() (bool, string) {
		want := http.StatusOK
		if strings.HasPrefix(path, "!") {
			path, want = path[1:], http.StatusServiceUnavailable
		}
		return func() (bool, string) {
			resp, body := call(t, http.MethodGet, s.base+path, nil)
			ok := resp.StatusCode == want && (want == http.StatusOK || bytes.Contains(body, []byte("not_ready")))
			return ok, strconv.Itoa(resp.StatusCode) + " " + string(body)
		}
	}
	pollUntil(t, 10*time.Second, "ready with three members", status("/readyz"))
	members := cluster.Members()
	for _, m := range members[:2] {
		if err := m.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	pollUntil(t, 15*time.Second, "not ready without quorum", status("!/readyz"))
	pollUntil(t, time.Second, "alive without quorum", status("/healthz"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := members[1].Restart(ctx); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, 15*time.Second, "ready again with two members", status("/readyz"))
}

// TestEtcdServeReadyzFollowsNoSpace: with etcd's NOSPACE alarm raised, reads still answer but
// every write is refused; serve's /readyz says so (503 naming NOSPACE) until the alarm is
// disarmed.
func TestEtcdServeReadyzFollowsNoSpace(t *testing.T) {
	ep := etcdtest.Embedded(t)
	s := startServe(t, []string{"SWARM_LEASE_LISTEN=127.0.0.1:0", "SWARM_LEASE_STORE=" + etcdURL(t, ep)}, "serve")
	ready := func(want int, detail string) func() (bool, string) {
		return func() (bool, string) {
			resp, body := call(t, http.MethodGet, s.base+"/readyz", nil)
			return resp.StatusCode == want && bytes.Contains(body, []byte(detail)), strconv.Itoa(resp.StatusCode) + " " + string(body)
		}
	}
	pollUntil(t, 10*time.Second, "ready", ready(http.StatusOK, "ready"))
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	status, err := cli.Status(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	member := status.Header.MemberId
	if _, err := pb.NewMaintenanceClient(cli.ActiveConnection()).Alarm(ctx,
		&pb.AlarmRequest{Action: pb.AlarmRequest_ACTIVATE, MemberID: member, Alarm: pb.AlarmType_NOSPACE}); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, 10*time.Second, "not ready under NOSPACE", ready(http.StatusServiceUnavailable, "NOSPACE"))
	if _, err := cli.AlarmDisarm(ctx, &clientv3.AlarmMember{MemberID: member, Alarm: pb.AlarmType_NOSPACE}); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, 10*time.Second, "ready once disarmed", ready(http.StatusOK, "ready"))
}

// TestEtcdSettingsErrors: every command that opens a store refuses an invalid etcd setting
// before it contacts anything, exit 2 naming the setting and where it came from — and never
// prints a password it was given, not even in a URL.
func TestEtcdSettingsErrors(t *testing.T) {
	const secret = "Sup3r-s3cret-pw"
	base := []string{"SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=a", "SWARM_LEASE_LISTEN=127.0.0.1:0"}
	store := "SWARM_LEASE_STORE=etcd://127.0.0.1:2379"
	dir := t.TempDir()
	unreadable := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(unreadable, []byte("-----BEGIN CERTIFICATE-----\n"), 0o000); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 { // root reads any file: a directory stands for the unreadable file
		unreadable = dir
	}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"a URL without a port", []string{"SWARM_LEASE_STORE=etcd://127.0.0.1"}, nil,
			[]string{`invalid store "etcd://127.0.0.1" (from environment variable SWARM_LEASE_STORE)`, "HOST:PORT"}},
		{"credentials in the URL", []string{"SWARM_LEASE_STORE=etcd://root:" + secret + "@127.0.0.1:2379"}, nil,
			[]string{"invalid store", "environment variable SWARM_LEASE_STORE", "SWARM_LEASE_ETCD_USERNAME", "SWARM_LEASE_ETCD_PASSWORD_FILE"}},
		{"credentials in the URL flag", nil, []string{"--store", "etcd://root:" + secret + "@127.0.0.1:2379"},
			[]string{"invalid store", "flag --store", "SWARM_LEASE_ETCD_PASSWORD_FILE"}},
		{"a password flag", []string{store}, []string{"--etcd-password", secret},
			[]string{"--etcd-password is refused", "etcd_password", "SWARM_LEASE_ETCD_PASSWORD_FILE"}},
		{"a password flag with =", []string{store}, []string{"--etcd-password=" + secret},
			[]string{"--etcd-password is refused", "SWARM_LEASE_ETCD_PASSWORD_FILE"}},
		{"an unreadable CA file", []string{store}, []string{"--etcd-ca-file", unreadable},
			[]string{"invalid etcd_ca_file (from flag --etcd-ca-file)", unreadable}},
		{"a password without a user", []string{store, "SWARM_LEASE_ETCD_PASSWORD=" + secret}, nil,
			[]string{"etcd_password (from environment variable SWARM_LEASE_ETCD_PASSWORD) is set without a user"}},
	} {
		for _, command := range [][]string{{"try-acquire"}, {"serve"}, {"run", "--", "true"}} {
			t.Run(tc.name+"/"+command[0], func(t *testing.T) {
				args := append(append([]string{command[0]}, tc.args...), command[1:]...)
				r := cli(t, append(append([]string{}, base...), tc.env...), args...)
				expectCode(t, r, 2, strings.Join(args, " "))
				for _, w := range tc.want {
					if !strings.Contains(r.stderr, w) {
						t.Errorf("error %q does not mention %q", r.stderr, w)
					}
				}
				if strings.Contains(r.stdout+r.stderr, secret) {
					t.Errorf("the password shows in the output:\n%s%s", r.stdout, r.stderr)
				}
			})
		}
	}
}

// TestEtcdPasswordNeverShows: on an etcd with authentication, a user whose role may read and
// write only the deployment's prefix works for `serve` (password from a _FILE) and `run` (from
// the variable) — and the password is in neither process's command line, output nor HTTP
// answers, nor in the environment of run's command. A wrong password fails naming the user's settings, without the password.
func TestEtcdPasswordNeverShows(t *testing.T) {
	const secret = "Sup3r-s3cret-pw"
	ep := etcdtest.Embedded(t)
	url := etcdURL(t, ep)
	prefix := url[strings.LastIndexByte(url, '/'):]
	enableEtcdAuth(t, ep, "lfp", secret, prefix)
	pwFile := filepath.Join(t.TempDir(), "etcd-password")
	if err := os.WriteFile(pwFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	user := []string{"SWARM_LEASE_STORE=" + url, "SWARM_LEASE_ETCD_USERNAME=lfp"}

	serve := startServe(t, append([]string{"SWARM_LEASE_LISTEN=127.0.0.1:0", "SWARM_LEASE_NAMESPACE=" + leasetest.Namespace(t),
		"SWARM_LEASE_ETCD_PASSWORD_FILE=" + pwFile}, user...), "serve")
	room := "/elections/" + rooms.NewRoomID()
	if code, won := postElection(t, serve.base, room+"/campaign", `{"candidate_id":"worker-a","ttl_seconds":30}`); code != http.StatusOK || won.Status != "leader" {
		t.Fatalf("campaign with etcd authentication: %d %+v", code, won)
	}
	var answers []byte
	for _, path := range []string{"/readyz", "/v1/info", "/v1/state", "/metrics", room} {
		resp, body := call(t, http.MethodGet, serve.base+path, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		answers = append(answers, body...)
	}

	env, childLog := etcdRunEnv(t, url)
	run := startRun(t, append(append(env, user[1:]...), "SWARM_LEASE_ETCD_PASSWORD="+secret), "a")
	events := waitForEvents(t, childLog, 10*time.Second, "the child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= 1 })
	// The command inherits run's environment, but not its credentials.
	if environ := procFile(startsOf(events)[0].PID, "environ"); len(environ) == 0 || bytes.Contains(environ, []byte(secret)) ||
		bytes.Contains(environ, []byte("SWARM_LEASE_ETCD_PASSWORD")) {
		t.Errorf("the child's environment holds the password or its variable (or could not be read: %d bytes)", len(environ))
	}
	runAPI := listenURL(t, run)
	_, info := call(t, http.MethodGet, runAPI+"/v1/info", nil)
	answers = append(answers, info...)
	if !bytes.Contains(info, []byte(`"store":"etcd store 127.0.0.1:`)) {
		t.Errorf("/v1/info: %s", info)
	}

	for _, p := range []*runProc{serve.runProc, run} {
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(cmdline, []byte(secret)) {
			t.Errorf("the password is on %s's command line: %q", p.name, cmdline)
		}
		if strings.Contains(p.out.String(), secret) {
			t.Errorf("the password is in %s's output:\n%s", p.name, p.out.String())
		}
	}
	if bytes.Contains(answers, []byte(secret)) {
		t.Errorf("the password is in an HTTP answer")
	}

	r := cli(t, append([]string{"SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=b", "SWARM_LEASE_ETCD_PASSWORD=wrong-" + secret}, user...), "try-acquire")
	expectCode(t, r, 11, "try-acquire with a wrong password")
	for _, want := range []string{`etcd refused the user "lfp"`, "etcd_password from environment variable SWARM_LEASE_ETCD_PASSWORD"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("a wrong password: %q does not mention %q", r.stderr, want)
		}
	}
	if strings.Contains(r.stdout+r.stderr, secret) {
		t.Errorf("a wrong password: the output holds it:\n%s%s", r.stdout, r.stderr)
	}
}

// TestEtcdTLS: against a member that requires TLS and client certificates, the one-shots and
// serve work with etcd_ca_file, etcd_cert_file and etcd_key_file, and say so (TLS) in what
// they print; without the client certificate the store is unreachable (exit 5), never reached in
// plain text.
func TestEtcdTLS(t *testing.T) {
	ep, files := etcdtest.EmbeddedTLS(t)
	store := "SWARM_LEASE_STORE=" + etcdURL(t, ep)
	ns := []string{"SWARM_LEASE_NAMESPACE=" + leasetest.Namespace(t), "SWARM_LEASE_HOLDER_ID=a"}
	tlsEnv := append([]string{store, "SWARM_LEASE_ETCD_CA_FILE=" + files.CA}, ns...)
	r := cli(t, tlsEnv, "try-acquire", "--json", "--etcd-cert-file", files.Cert, "--etcd-key-file", files.Key)
	expectCode(t, r, 0, "try-acquire over TLS")
	if g := decode[struct {
		Acquired bool   `json:"acquired"`
		Store    string `json:"store"`
	}](t, r); !g.Acquired || !strings.Contains(g.Store, "(TLS)") {
		t.Fatalf("try-acquire over TLS: %s", r.stdout)
	}
	withCert := append(slices.Clone(tlsEnv), "SWARM_LEASE_ETCD_CERT_FILE="+files.Cert, "SWARM_LEASE_ETCD_KEY_FILE="+files.Key)
	s := startServe(t, append([]string{"SWARM_LEASE_LISTEN=127.0.0.1:0"}, withCert...), "serve over TLS")
	if resp, body := call(t, http.MethodGet, s.base+"/readyz", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz over TLS: %d %s", resp.StatusCode, body)
	}
	if code, won := postElection(t, s.base, "/elections/"+rooms.NewRoomID()+"/campaign", `{"candidate_id":"worker-a","ttl_seconds":30}`); code != http.StatusOK || won.Status != "leader" {
		t.Fatalf("campaign over TLS: %d %+v", code, won)
	}
	r = cli(t, append(slices.Clone(tlsEnv), "SWARM_LEASE_ETCD_REQUEST_TIMEOUT_MS=500"), "inspect")
	expectCode(t, r, 5, "inspect without the client certificate")
}

// enableEtcdAuth turns on etcd's authentication with a root user and a user who may read and
// write only the keys under prefix.
func enableEtcdAuth(t *testing.T, endpoint, user, password, prefix string) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	steps := []func() error{
		func() error { _, err := cli.RoleAdd(ctx, "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "root", "root-"+password); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.RoleAdd(ctx, user); return err },
		func() error {
			_, err := cli.RoleGrantPermission(ctx, user, prefix, clientv3.GetPrefixRangeEnd(prefix), clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := cli.UserAdd(ctx, user, password); return err },
		func() error { _, err := cli.UserGrantRole(ctx, user, user); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("etcd authentication, step %d: %v", i, err)
		}
	}
}
