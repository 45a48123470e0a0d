package faults_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/faults/cluster"
	"github.com/regbo/lfp-swarm-lease/faults/contend"
	"github.com/regbo/lfp-swarm-lease/faults/internal/netns"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore"
)

// The etcd campaign's settings. The lease is shorter than on Swarm (etcd elects a new leader
// within about a second); the etcd request timeout is a quarter of it, so that a request no
// member answers (the quorum lost) fails well before the holder's deadline. A request to a
// frozen or cut-off member goes to another one by itself, within a fraction of its time.
const (
	etcdTTL       = 4 * time.Second
	etcdRequestMs = "1000"
	// etcdServePort is every serve replica's port, on its node's address.
	etcdServePort = 7700
	// etcdRooms are the rooms the elections contenders hold through every replica.
	etcdRoomsNamespace = "faults-rooms"
)

var etcdRooms = []string{"faults-room-a", "faults-room-b"}

// etcdRig is one etcd scenario's cluster (cluster.Etcd: three members, each in the network
// namespace of its node) with every kind of contender, each node's in that node's namespace,
// talking to all three members as a process on that host would:
//
//   - one `run` supervisor per node on one election (its fault child logs its term);
//   - callersPerManager one-shot lease callers per node on a second election, recording the
//     history for the linearizability check;
//   - one `serve` replica per node, and per room and replica one holder (clients/go Hold) that
//     works a random while and resigns; a room's terms are checked like the children.
type etcdRig struct {
	t       *testing.T
	e       *cluster.Etcd
	log     string
	bins    contend.Binaries
	retired []*contend.Supervisor
	sups    []*contend.Supervisor // sups[i] runs on node i+1
	callers []*contend.Caller
	servers []*contend.Server
	stop    context.CancelFunc
	wg      sync.WaitGroup
	floor   uint64
	began   int64
	figures []string
	rng     *rand.Rand
	// calls and roomTerms are what the run made, set by finish.
	calls, roomTerms int
	done             bool

	mu    sync.Mutex
	rooms map[string][]check.Term
	ends  map[string]int
	seq   int
}

func newEtcdRig(t *testing.T, seed uint64) *etcdRig {
	t.Helper()
	e := cluster.EtcdForTest(t)
	bins, err := contend.Build()
	if err != nil {
		t.Fatal(err)
	}
	r := &etcdRig{t: t, e: e, bins: bins, rng: rand.New(rand.NewPCG(seed, 0)), log: filepath.Join(t.TempDir(), "children.log"),
		began: check.Monotonic(), rooms: map[string][]check.Term{}, ends: map[string]int{}}
	t.Cleanup(r.abort)
	r.sups = make([]*contend.Supervisor, cluster.Nodes)
	for n := 1; n <= cluster.Nodes; n++ {
		r.startSupervisor(n)
	}
	for i := range cluster.Nodes * callersPerManager {
		n := i%cluster.Nodes + 1
		store, err := etcdstore.New(etcdstore.Options{Endpoints: e.Endpoints(), Prefix: "/faults", Dial: e.Dial(n),
			DialTimeout: time.Second, RequestTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		caller, err := contend.NewEtcdCaller(store, "faults-ops", i, seed)
		if err != nil {
			t.Fatal(err)
		}
		r.callers = append(r.callers, caller)
	}
	snap, err := r.callers[0].Election().Init(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r.floor = snap.Fence
	for n := 1; n <= cluster.Nodes; n++ {
		s, err := contend.StartServerWith(t.Context(), bins, contend.ServerConfig{
			Listen: cluster.Addr(n) + ":" + strconv.Itoa(etcdServePort), Namespace: etcdRoomsNamespace,
			NetNS: e.NetNS(n), Dial: netns.Dialer(e.NetNS(n)), Env: r.storeEnv(),
		})
		if err != nil {
			t.Fatal(err)
		}
		r.servers = append(r.servers, s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	for _, caller := range r.callers {
		r.wg.Go(func() { caller.Run(ctx, 0) })
	}
	for ri, room := range etcdRooms {
		for n, srv := range r.servers {
			r.wg.Go(func() { r.hold(ctx, srv, room, n+1, rand.New(rand.NewPCG(seed+uint64(n), uint64(ri)))) })
		}
	}
	if _, ok := r.waitChild(r.began, time.Minute); !ok {
		t.Fatal("no child started within a minute on a healthy cluster")
	}
	return r
}

// storeEnv is every process's store settings: all three members, short timeouts.
func (r *etcdRig) storeEnv() []string {
	return []string{"SWARM_LEASE_STORE=" + r.e.StoreURL("faults"),
		"SWARM_LEASE_ETCD_REQUEST_TIMEOUT_MS=" + etcdRequestMs, "SWARM_LEASE_ETCD_DIAL_TIMEOUT_MS=" + etcdRequestMs}
}

// startSupervisor starts the supervisor of node n, in n's namespace.
func (r *etcdRig) startSupervisor(n int) {
	r.t.Helper()
	s, err := contend.StartSupervisor(r.bins, contend.SupervisorConfig{
		Holder: fmt.Sprintf("sup%d", n), NetNS: r.e.NetNS(n), Store: r.e.StoreURL("faults"), Env: r.storeEnv()[1:],
		Namespace: "faults-run", TTL: etcdTTL, Grace: faultGrace, Poll: faultPoll, Skew: faultSkew, Log: r.log,
	})
	if err != nil {
		r.t.Fatal(err)
	}
	r.sups[n-1] = s
}

// hold is one elections contender: through srv, it holds room, works a random while (or until
// its leadership ends), resigns, and again, until ctx ends. It records each term from Hold's
// return to the end of its work.
func (r *etcdRig) hold(ctx context.Context, srv *contend.Server, room string, n int, rng *rand.Rand) {
	el, err := swarmlease.NewClient(srv.URL, swarmlease.WithHTTPClient(srv.Client))
	if err != nil {
		r.t.Error(err)
		return
	}
	candidate := fmt.Sprintf("holder%d", n)
	for ctx.Err() == nil {
		l, err := el.Hold(ctx, room, swarmlease.CampaignRequest{CandidateID: candidate, TTL: roomTTL},
			swarmlease.WithStopBefore(200*time.Millisecond))
		if err != nil {
			if ctx.Err() == nil {
				r.t.Errorf("%s in %s: Hold: %v", candidate, room, err)
			}
			return
		}
		began := check.Monotonic()
		work := time.NewTimer(time.Duration(500+rng.IntN(2500)) * time.Millisecond)
		cause := "resigned"
		select {
		case <-l.Done(): // lost or past its deadline: work stops now
			cause = "ended"
			if errors.Is(l.Cause(), swarmlease.ErrDeadline) {
				cause = "deadline"
			}
		case <-work.C:
		case <-ctx.Done():
		}
		ended := check.Monotonic()
		work.Stop()
		if cause == "resigned" {
			rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, _ = l.Resign(rctx)
			cancel()
		}
		r.mu.Lock()
		r.seq++
		r.rooms[room] = append(r.rooms[room], check.Term{Fence: l.Fence(), Holder: candidate, PID: r.seq, Start: began, Stop: ended})
		r.ends[cause]++
		r.mu.Unlock()
	}
}

// terms reads the children's log.
func (r *etcdRig) terms() []check.Term {
	events, err := check.ReadChildEvents(r.log)
	if err != nil {
		r.t.Fatal(err)
	}
	terms, err := check.Terms(events)
	if err != nil {
		r.t.Fatal(err)
	}
	return terms
}

// waitChild polls the children's log until a child that started after mono runs.
func (r *etcdRig) waitChild(after int64, timeout time.Duration) (check.Term, bool) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if term, ok := check.FirstStartAfter(r.terms(), after); ok {
			return term, true
		}
		time.Sleep(20 * time.Millisecond) // poll the log
	}
	return check.Term{}, false
}

// holder returns the running child's term and its supervisor's node.
func (r *etcdRig) holder() (check.Term, int) {
	r.t.Helper()
	term, ok := check.Running(r.terms(), check.Monotonic())
	if !ok {
		r.t.Fatal("no child runs")
	}
	return term, r.nodeOf(term.Holder)
}

func (r *etcdRig) nodeOf(holder string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(holder, "sup"))
	if err != nil || n < 1 || n > cluster.Nodes {
		r.t.Fatalf("unknown holder %q", holder)
	}
	return n
}

// leader returns the etcd leader.
func (r *etcdRig) leader() int {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.t.Context(), 30*time.Second)
	defer cancel()
	for {
		l, err := r.e.Leader(ctx)
		if err == nil {
			return l
		}
		if ctx.Err() != nil {
			r.t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // poll the members
	}
}

// waitNewLeader polls until a member other than old leads, and returns it with the time since
// mono.
func (r *etcdRig) waitNewLeader(old int, mono int64) (int, time.Duration) {
	r.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(r.t.Context(), 5*time.Second)
		l, err := r.e.Leader(ctx)
		cancel()
		if err == nil && l != old {
			return l, since(mono)
		}
		time.Sleep(20 * time.Millisecond) // poll the members
	}
	r.t.Fatalf("no member but m%d leads a minute after the fault", old)
	return 0, 0
}

// waitHolderOn moves the term to node n's supervisor: the others are stopped until n's child
// runs, then started again.
func (r *etcdRig) waitHolderOn(n int) {
	r.t.Helper()
	if _, hn := r.holder(); hn == n {
		return
	}
	t0 := check.Monotonic()
	for m := 1; m <= cluster.Nodes; m++ {
		if m != n {
			r.sups[m-1].Stop(30 * time.Second)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		found := false
		for _, term := range r.terms() {
			found = found || (term.Start > t0 && r.nodeOf(term.Holder) == n)
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("the supervisor on node %d did not take over within a minute: terms %+v", n, r.terms())
		}
		time.Sleep(20 * time.Millisecond) // poll the log
	}
	for m := 1; m <= cluster.Nodes; m++ {
		if m != n {
			r.retired = append(r.retired, r.sups[m-1])
			r.startSupervisor(m)
		}
	}
}

// jitter waits a random part of a TTL in the long variant.
func (r *etcdRig) jitter() {
	if *long {
		time.Sleep(time.Duration(r.rng.Int64N(int64(etcdTTL)))) // randomized fault timing, seeded
	}
}

func (r *etcdRig) figure(format string, args ...any) {
	r.figures = append(r.figures, fmt.Sprintf(format, args...))
	r.t.Logf("figure: "+format, args...)
}

// recovered waits until all three members agree on a leader and a child runs, and returns the
// time since mono.
func (r *etcdRig) recovered(mono int64) time.Duration {
	r.t.Helper()
	if err := r.e.WaitHealthy(r.t.Context(), 2*time.Minute); err != nil {
		r.t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, ok := check.Running(r.terms(), check.Monotonic()); ok {
			return since(mono)
		}
		if time.Now().After(deadline) {
			r.t.Fatal("no child runs a minute after the cluster healed")
		}
		time.Sleep(20 * time.Millisecond) // poll the log
	}
}

// finish stops every contender and runs the checkers; it logs the scenario's summary line.
func (r *etcdRig) finish() {
	t := r.t
	t.Helper()
	// Every room changes hands at least twice in a run: a scenario that ends soon after its
	// fault gives the holders the time to, so that a stuck room fails the test.
	for deadline := time.Now().Add(time.Minute); !r.roomsMoved(2) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // poll the holders' records
	}
	r.done = true
	r.stop()
	r.wg.Wait()
	var slowest time.Duration
	for _, s := range r.sups {
		began := time.Now()
		if !s.Stop(time.Minute) {
			t.Errorf("supervisor %s did not exit within a minute of SIGTERM", s.Config.Holder)
		}
		slowest = max(slowest, time.Since(began).Round(time.Millisecond))
	}
	for _, s := range r.servers {
		s.Stop()
	}
	r.figure("slowest supervisor exit after SIGTERM %v", slowest)
	terms := r.terms()
	if err := check.Children(terms, nil, 0); err != nil {
		t.Errorf("children: %v", err)
	}
	for _, room := range etcdRooms {
		if err := check.Children(r.rooms[room], nil, 0); err != nil {
			t.Errorf("room %s: %v", room, err)
		}
		r.roomTerms += len(r.rooms[room])
	}
	if !r.roomsMoved(2) {
		t.Errorf("the rooms did not all change hands: %d terms in %d rooms", r.roomTerms, len(etcdRooms))
	}
	var ops []check.LeaseOp
	var counts contend.Counts
	errs := map[string]int{}
	for _, c := range r.callers {
		ops = append(ops, c.Ops()...)
		counts = counts.Add(c.Counts())
		for class, n := range c.Errors() {
			errs[class] += n
		}
		_ = c.Close()
	}
	for class, n := range errs {
		t.Logf("store errors: %d × %s", n, class)
	}
	r.calls = counts.Calls
	res, stale, err := check.LeaseHistory(r.floor, check.RankFences(r.floor, ops), 2*time.Minute)
	if err != nil {
		t.Errorf("lease history: %v", err)
	}
	r.figure("refusals: %v", stale)
	fences := make([]string, len(terms))
	for i, term := range terms {
		fences[i] = strconv.FormatUint(term.Fence-terms[0].Fence, 10)
	}
	t.Logf("summary %s: %d terms (fences after the first, +µs: %s), %d lease calls, %d store errors (%.1f%%), %d unknown outcomes, porcupine %s; %d room terms, ends %v; %s",
		t.Name(), len(terms), strings.Join(fences, " "), counts.Calls, counts.Errors, 100*float64(counts.Errors)/float64(max(counts.Calls, 1)),
		counts.Unknown, res, r.roomTerms, r.ends, strings.Join(r.figures, "; "))
	r.dumpIfFailed()
}

// roomsMoved reports whether every room has had at least n terms.
func (r *etcdRig) roomsMoved(n int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, room := range etcdRooms {
		if len(r.rooms[room]) < n {
			return false
		}
	}
	return true
}

// dumpIfFailed logs every supervisor's and server's output if the test failed.
func (r *etcdRig) dumpIfFailed() {
	if !r.t.Failed() {
		return
	}
	for _, s := range append(r.retired, r.sups...) {
		if s != nil {
			r.t.Logf("supervisor %s (pid %d) output:\n%s", s.Config.Holder, s.PID(), s.Output())
		}
	}
	for n, s := range r.servers {
		r.t.Logf("serve on node%d:\n%s", n+1, s.Output())
	}
}

// abort stops whatever a failed scenario left running.
func (r *etcdRig) abort() {
	if r.done {
		return
	}
	r.done = true
	if r.stop != nil {
		r.stop()
	}
	r.wg.Wait()
	for _, s := range r.sups {
		if s != nil {
			s.Stop(10 * time.Second)
		}
	}
	for _, s := range r.servers {
		s.Stop()
	}
	r.dumpIfFailed()
}
