package faults_test

import (
	"fmt"
	"syscall"
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

// followerManagerCrash crashes a manager that is neither the Raft leader nor the holder's:
// the holder keeps its child, writes go on, and the restarted manager rejoins.
func followerManagerCrash(r *rig) {
	t := r.t
	holder, hn := r.holder()
	f := other(hn, r.leader())
	r.jitter()
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

// leaderManagerCrash crashes the Raft leader, with the holder attached to it: the holder
// loses its store and stops its child by its deadline; a contender on the majority takes over
// with a higher fence once the Swarm has a new leader.
func leaderManagerCrash(r *rig) {
	t := r.t
	l := r.leader()
	waitHolderOn(r, l)
	r.jitter()
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
	r.jitter()
	t0 := check.Monotonic()
	for m := 1; m <= cluster.Nodes; m++ {
		if m != n {
			r.sups[m-1].Stop(30 * time.Second)
		}
	}
	// The others stop one after another, so one of them may still win a term in between: wait
	// for a child of n's supervisor, not for the first child after t0.
	if _, ok := r.waitChildOn(n, t0, time.Minute); !ok {
		r.t.Fatalf("the supervisor on manager %d did not take over within a minute: terms %+v", n, r.terms())
	}
	for m := 1; m <= cluster.Nodes; m++ {
		if m != n {
			r.restart(m)
		}
	}
}

// quorumLoss crashes two managers, leaving the holder's manager without a Raft quorum: the
// holder stops its child by its deadline, nobody starts one until a manager comes back, then a
// contender takes over with a higher fence.
func quorumLoss(r *rig) {
	t := r.t
	holder, hn := r.holder()
	r.jitter()
	t0 := check.Monotonic()
	for _, n := range []int{other(hn), other(hn, other(hn))} {
		if err := r.c.Kill(n); err != nil {
			t.Fatal(err)
		}
	}
	// Quorum is gone once the second kill has returned (each waits for its dockerd to exit):
	// until then a renewal or a takeover can still commit.
	tq := check.Monotonic()
	r.figure("quorum loss: both kills took %v", time.Duration(tq-t0).Round(time.Millisecond))
	time.Sleep(2 * faultTTL) // no quorum for two TTLs: time passing is what is tested
	t1 := check.Monotonic()
	terms := r.terms()
	for _, term := range terms {
		if term.PID == holder.PID && (term.Stop == 0 || term.Stop > tq+faultTTL.Nanoseconds()) {
			t.Errorf("the holder's child ran on without quorum: stopped at +%v after quorum was lost (0: still running), deadline within %v",
				time.Duration(term.Stop-tq), faultTTL)
		} else if term.PID == holder.PID {
			r.figure("quorum loss: holder stopped its child %v after the fault", time.Duration(term.Stop-t0).Round(time.Millisecond))
		}
		if term.Start > tq {
			t.Errorf("a child started without quorum: %+v", term)
		}
	}
	restored := other(hn)
	if err := r.c.StartNode(t.Context(), restored); err != nil {
		t.Fatal(err)
	}
	next, ok := r.waitChild(t1, 2*time.Minute)
	if !ok {
		t.Fatal("no child within 2 minutes of quorum's return")
	}
	r.figure("quorum back to new child %v", time.Duration(next.Start-t1).Round(time.Millisecond))
	t2 := check.Monotonic()
	if err := r.c.StartNode(t.Context(), other(hn, restored)); err != nil {
		t.Fatal(err)
	}
	r.figure("third manager back to normal %v", r.recovered(t2))
	r.finish()
}

// partitionedHolderManager cuts the holder's manager (a Raft follower) off: the holder
// stops its child by its deadline, the majority side takes over with a higher fence; healing
// the manager is disruptive (it rejoins with a higher Raft term) and the cluster recovers.
func partitionedHolderManager(r *rig) {
	l := r.leader()
	waitHolderOn(r, other(l))
	partitionHolder(r)
	r.finish()
}

// partitionedLeaderStaleReads cuts the Raft leader off while the holder talks to it: the
// ex-leader answers reads from its stale copy for a while, so the holder's supervisor and the
// callers on it decide on old records — which must not let anything through.
func partitionedLeaderStaleReads(r *rig) {
	waitHolderOn(r, r.leader())
	partitionHolder(r)
	r.finish()
}

// partitionHolder partitions the holder's manager for long enough that the majority takes
// over, then heals it and waits for normal operation. A partition is no evidence that the
// holder is gone — it lives on, cut off, and stops its child by its deadline — so the takeover
// comes only once the term has expired: at least a TTL after the holder's last renewal, which
// came at most a renew interval before the fault.
func partitionHolder(r *rig) {
	t := r.t
	holder, hn := r.holder()
	r.jitter()
	t0 := check.Monotonic()
	if err := r.c.Partition(hn); err != nil {
		t.Fatal(err)
	}
	next, took := r.takeover(t0, fmt.Sprintf("partition of node%d", hn))
	if next.Fence <= holder.Fence || r.managerOf(next.Holder) == hn {
		t.Errorf("takeover %+v after partitioning the holder %+v's manager", next, holder)
	}
	r.onlyAtExpiry(took, "partitioning the holder's manager")
	time.Sleep(faultTTL) // the partitioned side keeps trying for a TTL more: time passing is tested
	t1 := check.Monotonic()
	if err := r.c.Heal(hn); err != nil {
		t.Fatal(err)
	}
	r.figure("heal to normal %v", r.recovered(t1))
	time.Sleep(faultTTL) // the disruptive rejoin plays out under load
	if r.svc != nil {
		r.svc.waitTasks(t, time.Minute)
	}
}

// engineRestartUnderHolder restarts (SIGTERM, start) the dockerd the holder talks to.
func engineRestartUnderHolder(r *rig) {
	t := r.t
	holder, hn := r.holder()
	r.jitter()
	t0 := check.Monotonic()
	if err := r.c.Stop(hn); err != nil {
		t.Fatal(err)
	}
	if err := r.c.StartNode(t.Context(), hn); err != nil {
		t.Fatal(err)
	}
	r.figure("dockerd restart under the holder took %v", since(t0))
	t1 := check.Monotonic()
	r.figure("restart to normal %v", r.recovered(t1))
	if still, ok := check.Running(r.terms(), check.Monotonic()); ok && still.PID == holder.PID {
		r.figure("the holder kept its term")
	} else if next, ok := check.FirstStartAfter(r.terms(), t0); ok {
		r.figure("fault to new child %v", time.Duration(next.Start-t0).Round(time.Millisecond))
	}
	time.Sleep(faultTTL) // normal operation after the restart: time passing is tested
	r.finish()
}

// frozenHolder freezes the holder's supervisor and child (SIGSTOP) for two TTLs: a
// contender takes over with a higher fence; on thaw the supervisor finds its deadline passed and
// stops its child at once. The overlap is the documented case that fencing covers.
func frozenHolder(r *rig) {
	t := r.t
	holder, hn := r.holder()
	r.jitter()
	t0 := check.Monotonic()
	if _, err := r.sups[hn-1].Freeze(); err != nil {
		t.Fatal(err)
	}
	next, ok := r.waitChild(t0, 2*time.Minute)
	if !ok {
		t.Fatal("no takeover within 2 minutes of freezing the holder")
	}
	r.figure("frozen holder: fault to new child %v", time.Duration(next.Start-t0).Round(time.Millisecond))
	time.Sleep(faultTTL) // frozen past its deadline: time passing is what is tested
	thaw := check.Monotonic()
	if err := r.sups[hn-1].Thaw(); err != nil {
		t.Fatal(err)
	}
	r.thawed(holder, thaw)
	time.Sleep(faultTTL) // the thawed supervisor contends again beside the new holder
	r.finish()
}

// thawed records that holder's child was thawed at thaw (when the thaw was asked for: it
// happens while that call runs), and waits for its stop.
func (r *rig) thawed(holder check.Term, thaw int64) {
	r.thaws = append(r.thaws, check.Thaw{Child: holder.Child(), Mono: thaw})
	deadline := time.Now().Add(time.Minute)
	for {
		for _, term := range r.terms() {
			if term.Child() == holder.Child() && term.Stop != 0 {
				r.figure("thaw to the frozen child's stop %v", time.Duration(term.Stop-thaw).Round(time.Millisecond))
				return
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatal("the thawed holder's child still runs a minute after the thaw")
		}
		time.Sleep(20 * time.Millisecond) // poll the log
	}
}

// killedHolderRun SIGKILLs the holder's `run` (alone) on the host: its guard stops its child
// within the grace period, and once nothing holds the run's incarnation lock — held by run, the
// guard and the child for as long as any of them lives — another supervisor on this host takes
// over on that evidence, long before the term could expire. The killed supervisor is then
// started again under its identity, as a shell loop or a service manager would.
func killedHolderRun(r *rig) {
	t := r.t
	holder, hn := r.holder()
	r.jitter()
	t0 := check.Monotonic()
	if err := syscall.Kill(r.sups[hn-1].PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	next, took := r.takeover(t0, "SIGKILL of the holder's run")
	if next.Fence <= holder.Fence || took > faultGrace+500*time.Millisecond {
		t.Errorf("takeover %+v %v after SIGKILL of the holder's run (%+v): want a higher fence within the grace period (%v) + 0.5 s",
			next, took, holder, faultGrace)
	}
	r.restart(hn)
	r.finish()
}

// killedHolderContainer kills the holder's container (`docker kill`): Swarm reports its task
// failed once the container — and with it every process of it — is gone, and a follower takes
// over on that evidence, long before the term could expire. The killed child logs no stop: its
// lock tells whether it outlived the takeover.
func killedHolderContainer(r *rig) {
	t := r.t
	holder, hn, id, t0 := r.dockerHolder("kill")
	if state, err := r.c.Docker(t.Context(), hn, "inspect", "--format", "{{.State.Running}}", id); err != nil || state != "false" {
		t.Fatalf("container %s after docker kill: running %q (%v)", id, state, err)
	}
	r.kills[holder.Child()] = check.Monotonic()
	next, took := r.takeover(t0, "docker kill of the holder's container")
	if next.Fence <= holder.Fence || took >= faultTTL-faultRenew {
		t.Errorf("takeover %+v %v after killing the holder's container (%+v): want a higher fence before the term could expire (TTL %v, renewals every %v)",
			next, took, holder, faultTTL, faultRenew)
	}
	r.svc.waitTasks(t, time.Minute) // Swarm's replacement of the killed task
}

// pausedHolderContainer freezes the holder's container (`docker pause`) for two TTLs: a paused
// container is no evidence (its task stays running), so the takeover waits for the term to
// expire; on unpause the supervisor finds its deadline passed and stops its child at once.
func pausedHolderContainer(r *rig) {
	t := r.t
	holder, hn, id, t0 := r.dockerHolder("pause")
	paused := true
	defer func() {
		if paused {
			_, _ = r.c.Docker(t.Context(), hn, "unpause", id)
		}
	}()
	next, took := r.takeover(t0, "docker pause of the holder's container")
	if next.Fence <= holder.Fence {
		t.Errorf("takeover %+v after pausing the holder's container (%+v): want a higher fence", next, holder)
	}
	r.onlyAtExpiry(took, "pausing the holder's container")
	time.Sleep(faultTTL) // paused past its deadline: time passing is what is tested
	thaw := check.Monotonic()
	if _, err := r.c.Docker(t.Context(), hn, "unpause", id); err != nil {
		t.Fatal(err)
	}
	paused = false
	r.thawed(holder, thaw)
}

// dockerHolder runs `docker verb` on the holder's container (its child's hostname: Docker's
// default, the container's short ID), after the jitter, and returns the holder, its manager,
// its container and when the fault began.
func (r *rig) dockerHolder(verb string) (holder check.Term, hn int, id string, t0 int64) {
	holder, hn = r.holder()
	id = holder.Host
	r.jitter()
	t0 = check.Monotonic()
	if _, err := r.c.Docker(r.t.Context(), hn, verb, id); err != nil {
		r.t.Fatal(err)
	}
	return holder, hn, id, t0
}

// takeover waits for the first child started after the fault at t0, records how long it took
// as a figure, and returns it.
func (r *rig) takeover(t0 int64, fault string) (check.Term, time.Duration) {
	r.t.Helper()
	next, ok := r.waitChild(t0, 2*time.Minute)
	if !ok {
		r.t.Fatalf("no new child within 2 minutes of the %s", fault)
	}
	took := time.Duration(next.Start - t0)
	r.figure("%s: fault to new child %v", fault, took.Round(time.Millisecond))
	return next, took
}

// onlyAtExpiry fails the test if a takeover took less than the holder's term can have left: it
// renewed at most a renew interval before the fault, which was no evidence of its end.
func (r *rig) onlyAtExpiry(took time.Duration, fault string) {
	if took < faultTTL-faultRenew {
		r.t.Errorf("takeover %v after %s, before the holder's term could expire (TTL %v, renewals every %v)", took, fault, faultTTL, faultRenew)
	}
}

// containerFaults is the containerised supervisors' faults in one cluster, one after the other:
// the holder's container killed, then paused, then its manager partitioned.
func containerFaults(r *rig) {
	killedHolderContainer(r)
	pausedHolderContainer(r)
	partitionHolder(r)
	r.finish()
}

// finished is a scenario of one fault that leaves the checks to the caller, followed by them.
func finished(fault func(*rig)) func(*rig) {
	return func(r *rig) {
		fault(r)
		r.finish()
	}
}

// scenarios are the fault scenarios, in the order docs/reliability.md lists them.
var scenarios = []struct {
	name string
	rig  func(*testing.T, uint64) *rig
	run  func(*rig)
}{
	{"FollowerManagerCrash", newRig, followerManagerCrash},
	{"LeaderManagerCrash", newRig, leaderManagerCrash},
	{"QuorumLoss", newRig, quorumLoss},
	{"PartitionedHolderManager", newRig, partitionedHolderManager},
	{"PartitionedLeaderStaleReads", newRig, partitionedLeaderStaleReads},
	{"EngineRestartUnderHolder", newRig, engineRestartUnderHolder},
	{"FrozenHolder", newRig, frozenHolder},
	{"KilledHolderRun", newRig, killedHolderRun},
	{"KilledHolderContainer", newContainerRig, finished(killedHolderContainer)},
	{"PausedHolderContainer", newContainerRig, finished(pausedHolderContainer)},
	{"PartitionedContainerHolder", newContainerRig, finished(partitionHolder)},
}

// TestFollowerManagerCrash runs the followerManagerCrash scenario once (the CI variant).
func TestFollowerManagerCrash(t *testing.T) { scenarios[0].run(newRig(t, 1)) }

// TestLeaderManagerCrash runs the leaderManagerCrash scenario once (the CI variant).
func TestLeaderManagerCrash(t *testing.T) { scenarios[1].run(newRig(t, 2)) }

// TestQuorumLoss runs the quorumLoss scenario once (the CI variant).
func TestQuorumLoss(t *testing.T) { scenarios[2].run(newRig(t, 3)) }

// TestPartitionedHolderManager runs the partitionedHolderManager scenario once (the CI variant).
func TestPartitionedHolderManager(t *testing.T) { scenarios[3].run(newRig(t, 4)) }

// TestPartitionedLeaderStaleReads runs the partitionedLeaderStaleReads scenario once (the CI variant).
func TestPartitionedLeaderStaleReads(t *testing.T) { scenarios[4].run(newRig(t, 5)) }

// TestEngineRestartUnderHolder runs the engineRestartUnderHolder scenario once (the CI variant).
func TestEngineRestartUnderHolder(t *testing.T) { scenarios[5].run(newRig(t, 6)) }

// TestFrozenHolder runs the frozenHolder scenario once (the CI variant).
func TestFrozenHolder(t *testing.T) { scenarios[6].run(newRig(t, 7)) }

// TestKilledHolderRun runs the killedHolderRun scenario once (the CI variant).
func TestKilledHolderRun(t *testing.T) { scenarios[7].run(newRig(t, 9)) }

// TestContainerFaults runs the containerised supervisors' scenarios once, one after the other
// in one cluster (the CI variant): the holder's container killed, paused, and its manager
// partitioned.
func TestContainerFaults(t *testing.T) { containerFaults(newContainerRig(t, 10)) }
