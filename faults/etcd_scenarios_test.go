package faults_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/faults/cluster"
)

// The etcd scenarios. Every contender talks to all three members, so a member's fault is the
// cluster's, not a host's: a holder whose member dies goes on through the others. What cuts a
// holder off is a partition of its host, or the loss of quorum.

// etcdLeaderKilled crashes the etcd leader (SIGKILL): the others elect a leader within about a
// second, requests move to them, and the killed member restarts on its data and catches up.
func etcdLeaderKilled(r *etcdRig) {
	t := r.t
	l := r.leader()
	holder, _ := r.holder()
	r.jitter()
	t0 := check.Monotonic()
	if err := r.e.Kill(l); err != nil {
		t.Fatal(err)
	}
	_, took := r.waitNewLeader(l, t0)
	r.figure("leader m%d killed: new leader after %v", l, took)
	time.Sleep(2 * etcdTTL) // the fault lasts two TTLs: time passing is what is tested
	r.holderFigure(holder, t0)
	t1 := check.Monotonic()
	if err := r.e.Start(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	r.figure("restart to normal %v", r.recovered(t1))
	r.finish()
}

// holderFigure records whether the holder of before kept its term through the fault at mono, or
// how long the next child took.
func (r *etcdRig) holderFigure(before check.Term, mono int64) {
	if still, ok := check.Running(r.terms(), check.Monotonic()); ok && still.PID == before.PID {
		r.figure("the holder kept its term")
	} else if next, ok := check.FirstStartAfter(r.terms(), mono); ok {
		r.figure("fault to new child %v", time.Duration(next.Start-mono).Round(time.Millisecond))
	}
}

// etcdFollowerKilled crashes a member that is not the leader: nothing changes hands — the
// holder keeps its term — and the member restarts and catches up.
func etcdFollowerKilled(r *etcdRig) {
	t := r.t
	l := r.leader()
	f := l%cluster.Nodes + 1
	holder, _ := r.holder()
	r.jitter()
	t0 := check.Monotonic()
	if err := r.e.Kill(f); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * etcdTTL) // the fault lasts two TTLs: time passing is what is tested
	if still, ok := check.Running(r.terms(), check.Monotonic()); !ok || still.PID != holder.PID {
		t.Errorf("the holder's child (fence %d) did not survive a follower's crash; running now: %+v", holder.Fence, still)
	}
	r.figure("follower m%d killed: holder kept its term for %v", f, since(t0))
	t1 := check.Monotonic()
	if err := r.e.Start(t.Context(), f); err != nil {
		t.Fatal(err)
	}
	r.figure("restart to normal %v", r.recovered(t1))
	r.finish()
}

// etcdLeaderFrozen freezes the etcd leader (SIGSTOP) for two TTLs: its connections stay open
// but nothing answers, so requests sent to it hang until their timeout; the others elect a new
// leader. Thawed, the old leader finds a higher Raft term and follows.
func etcdLeaderFrozen(r *etcdRig) {
	t := r.t
	l := r.leader()
	holder, _ := r.holder()
	r.jitter()
	t0 := check.Monotonic()
	if err := r.e.Pause(l); err != nil {
		t.Fatal(err)
	}
	_, took := r.waitNewLeader(l, t0)
	r.figure("leader m%d frozen: new leader after %v", l, took)
	time.Sleep(2*etcdTTL - took) // frozen past the TTL: time passing is what is tested
	r.holderFigure(holder, t0)
	t1 := check.Monotonic()
	if err := r.e.Resume(l); err != nil {
		t.Fatal(err)
	}
	r.figure("thaw to normal %v", r.recovered(t1))
	time.Sleep(etcdTTL) // the thawed member rejoins under load
	r.finish()
}

// etcdLeaderPartitioned cuts the etcd leader's node off — the member and the processes on that
// host, the holder among them: the holder can reach only its own member, which has lost its
// quorum, and stops its child by its deadline; the majority elects a leader and a supervisor
// there takes over with a higher fence. Healed, the old leader rejoins as a follower.
func etcdLeaderPartitioned(r *etcdRig) {
	t := r.t
	l := r.leader()
	r.waitHolderOn(l)
	holder, hn := r.holder()
	r.jitter()
	t0 := check.Monotonic()
	if err := r.e.Partition(hn); err != nil {
		t.Fatal(err)
	}
	next, ok := r.waitChild(t0, 2*time.Minute)
	if !ok {
		t.Fatal("no child on the majority side within 2 minutes of the partition")
	}
	r.figure("partition of node%d (etcd leader and holder): fault to new child %v", hn, time.Duration(next.Start-t0).Round(time.Millisecond))
	if next.Fence <= holder.Fence || r.nodeOf(next.Holder) == hn {
		t.Errorf("takeover %+v after partitioning the holder %+v's node", next, holder)
	}
	time.Sleep(etcdTTL) // the partitioned side keeps trying for a TTL more: time passing is tested
	t1 := check.Monotonic()
	if err := r.e.Heal(hn); err != nil {
		t.Fatal(err)
	}
	r.figure("heal to normal %v", r.recovered(t1))
	time.Sleep(etcdTTL) // the rejoin plays out under load
	r.finish()
}

// etcdQuorumLoss kills two members: the holder can renew nowhere and stops its child by its
// deadline; nobody starts one until a member comes back; then a contender takes over with a
// higher fence.
func etcdQuorumLoss(r *etcdRig) {
	t := r.t
	l := r.leader()
	down := []int{l, l%cluster.Nodes + 1}
	holder, _ := r.holder()
	r.jitter()
	t0 := check.Monotonic()
	for _, n := range down {
		if err := r.e.Kill(n); err != nil {
			t.Fatal(err)
		}
	}
	tq := check.Monotonic() // quorum is gone once the second kill has returned
	time.Sleep(2 * etcdTTL) // no quorum for two TTLs: time passing is what is tested
	t1 := check.Monotonic()
	for _, term := range r.terms() {
		if term.PID == holder.PID && (term.Stop == 0 || term.Stop > tq+etcdTTL.Nanoseconds()) {
			t.Errorf("the holder's child ran on without quorum: stopped at +%v after quorum was lost (0: still running), deadline within %v",
				time.Duration(term.Stop-tq), etcdTTL)
		} else if term.PID == holder.PID {
			r.figure("quorum loss: holder stopped its child %v after the fault", time.Duration(term.Stop-t0).Round(time.Millisecond))
		}
		if term.Start > tq {
			t.Errorf("a child started without quorum: %+v", term)
		}
	}
	if err := r.e.Start(t.Context(), down[0]); err != nil {
		t.Fatal(err)
	}
	next, ok := r.waitChild(t1, 2*time.Minute)
	if !ok {
		t.Fatal("no child within 2 minutes of quorum's return")
	}
	r.figure("quorum back to new child %v", time.Duration(next.Start-t1).Round(time.Millisecond))
	t2 := check.Monotonic()
	if err := r.e.Start(t.Context(), down[1]); err != nil {
		t.Fatal(err)
	}
	r.figure("third member back to normal %v", r.recovered(t2))
	r.finish()
}

// etcdRestartAll restarts every member at once (SIGTERM to all three, then start them on their
// data): the holder keeps its term if the cluster is back before its deadline, else stops its
// child by it, and a term follows with a higher fence.
func etcdRestartAll(r *etcdRig) {
	t := r.t
	holder, _ := r.holder()
	r.jitter()
	t0 := check.Monotonic()
	for n := 1; n <= cluster.Nodes; n++ {
		if err := r.e.Stop(n); err != nil {
			t.Fatal(err)
		}
	}
	r.figure("all three members stopped in %v", since(t0))
	if err := r.e.Start(t.Context(), 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	r.figure("restart of every member took %v", since(t0))
	t1 := check.Monotonic()
	r.figure("restart to normal %v", r.recovered(t1))
	r.holderFigure(holder, t0)
	time.Sleep(etcdTTL) // normal operation after the restart: time passing is tested
	r.finish()
}

// etcdScenarios are the etcd fault scenarios, in the order docs/reliability.md lists them.
var etcdScenarios = []struct {
	name string
	run  func(*etcdRig)
}{
	{"EtcdLeaderKilled", etcdLeaderKilled},
	{"EtcdFollowerKilled", etcdFollowerKilled},
	{"EtcdLeaderFrozen", etcdLeaderFrozen},
	{"EtcdLeaderPartitioned", etcdLeaderPartitioned},
	{"EtcdQuorumLoss", etcdQuorumLoss},
	{"EtcdRestartAll", etcdRestartAll},
}

// TestEtcdFaults runs every etcd scenario once (the CI variant), each on a cluster of its own.
func TestEtcdFaults(t *testing.T) {
	for i, sc := range etcdScenarios {
		t.Run(sc.name, func(t *testing.T) { sc.run(newEtcdRig(t, uint64(100+i))) })
	}
}

// TestEtcdLongCampaign runs the etcd scenarios in rounds, in a seeded random order, with seeded
// random fault timing, until the one-shot callers have made longOps lease operations (and at
// least two rounds). Only with -long; FAULTS_SEED=N replays a run's fault timing and
// operation mix.
func TestEtcdLongCampaign(t *testing.T) {
	if !*long {
		t.Skip("the long fault campaign runs with -long (scripts/fault-campaign.sh -etcd -long)")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FAULTS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("FAULTS_SEED=%q is not an unsigned integer: %v", s, err)
		}
	}
	t.Logf("seed %d (replay with FAULTS_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	total, roomTerms, began := 0, 0, time.Now()
	for round := 1; total < longOps || round <= 2; round++ {
		for _, i := range rng.Perm(len(etcdScenarios)) {
			sc := etcdScenarios[i]
			scenarioSeed := rng.Uint64()
			t.Run(fmt.Sprintf("round%d/%s", round, sc.name), func(t *testing.T) {
				r := newEtcdRig(t, scenarioSeed)
				sc.run(r)
				total += r.calls
				roomTerms += r.roomTerms
			})
			if t.Failed() {
				t.Fatalf("stopping after the first failing scenario; seed %d", seed)
			}
		}
		t.Logf("after round %d: %d lease operations, %d room terms, %v", round, total, roomTerms, time.Since(began).Round(time.Second))
	}
	t.Logf("long etcd campaign: %d lease operations, %d room terms, 0 violations, seed %d, %v", total, roomTerms, seed, time.Since(began).Round(time.Second))
}
