package faults_test

import (
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/faults/cluster"
)

// other returns a manager that is none of not.
func other(not ...int) int {
	for n := 1; n <= cluster.Nodes; n++ {
		ok := true
		for _, x := range not {
			ok = ok && n != x
		}
		if ok {
			return n
		}
	}
	return 0
}

// TestFollowerManagerCrash crashes a manager that is neither the Raft leader nor the holder's:
// the holder keeps its child, writes go on, and the restarted manager rejoins.
func TestFollowerManagerCrash(t *testing.T) {
	r := newRig(t, 1)
	holder, hn := r.holder()
	f := other(hn, r.leader())
	t0 := check.Monotonic()
	if err := r.c.Kill(f); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * faultTTL) // the fault lasts two TTLs: time passing is what is tested
	if still, ok := check.Running(r.terms(), check.Monotonic()); !ok || still.PID != holder.PID {
		t.Errorf("the holder's child (fence %d) did not survive a follower's crash; running now: %+v", holder.Fence, still)
	}
	t1 := check.Monotonic()
	if err := r.c.StartNode(t.Context(), f); err != nil {
		t.Fatal(err)
	}
	r.figure("follower crash: holder kept its term for %v", since(t0))
	r.figure("restart to normal %v", r.recovered(t1))
	r.finish()
}

// TestLeaderManagerCrash crashes the Raft leader, with the holder attached to it: the holder
// loses its store and stops its child by its deadline; a contender on the majority takes over
// with a higher fence once the Swarm has a new leader.
func TestLeaderManagerCrash(t *testing.T) {
	r := newRig(t, 2)
	l := r.leader()
	waitHolderOn(r, l)
	t0 := check.Monotonic()
	if err := r.c.Kill(l); err != nil {
		t.Fatal(err)
	}
	next, ok := r.waitChild(t0, 2*time.Minute)
	if !ok {
		t.Fatal("no new child within 2 minutes of the leader's crash")
	}
	r.figure("leader crash: fault to new child %v", time.Duration(next.Start-t0).Round(time.Millisecond))
	t1 := check.Monotonic()
	if err := r.c.StartNode(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	r.figure("restart to normal %v", r.recovered(t1))
	r.finish()
}

// waitHolderOn moves the term to the supervisor on manager n: the other supervisors are
// stopped (they stop their child and release) until n's child runs, then started again.
func waitHolderOn(r *rig, n int) {
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
	term, ok := r.waitChild(t0, time.Minute)
	if !ok || r.managerOf(term.Holder) != n {
		r.t.Fatalf("the supervisor on manager %d did not take over: %+v", n, term)
	}
	for m := 1; m <= cluster.Nodes; m++ {
		if m != n {
			r.restart(m)
		}
	}
}
