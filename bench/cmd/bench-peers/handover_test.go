package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore/etcdtest"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// TestMeasureHandover runs one handover, one failover and one stop of each kind through the
// benchmark's own code, one kind at a time and both side by side (-interleave), with real
// processes: `lfp-swarm-lease run` on a file store (built from cli/), and etcd-run on a real
// etcd, which it skips when Debian's etcd-server is not installed.
func TestMeasureHandover(t *testing.T) {
	leasetest.Long(t, "builds lfp-swarm-lease and runs real supervisors")
	bin := t.TempDir()
	build := func(name, dir, pkg string) string {
		out := filepath.Join(bin, name)
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, b)
		}
		return out
	}
	c := config{
		serve:     build("lfp-swarm-lease", "../../../cli", "./cmd/lfp-swarm-lease"),
		testchild: build("testchild", "../../../cli", "./internal/testchild"),
		etcdRun:   build("etcd-run", "..", "./etcd-run"),
		handovers: 1,
		failovers: 1,
		stops:     1,
	}
	ttl, renew := c.leaseTTL(), c.renew()
	groups := map[string][]supervisor{"interleaved": supervisors}
	for _, s := range supervisors {
		groups[s.name] = []supervisor{s}
	}
	for name, group := range groups {
		t.Run(name, func(t *testing.T) {
			if name != "run" {
				c.etcd = etcdtest.Binary(t)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			runs, err := measureHandovers(ctx, c, group)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != len(group) {
				t.Fatalf("%d runs, want one per kind: %d", len(runs), len(group))
			}
			for i, r := range runs {
				t.Log(r.report())
				if r.kind != group[i].name {
					t.Fatalf("run %d is of %s, want %s", i, r.kind, group[i].name)
				}
				if len(r.fromStop) != 1 || len(r.fromSignal) != 1 || len(r.failover) != 1 || len(r.stops) != 1 {
					t.Fatalf("measured %d, %d, %d and %d values, want one of each", len(r.fromStop), len(r.fromSignal), len(r.failover), len(r.stops))
				}
				if r.fromSignal[0] <= 0 || r.fromSignal[0] >= ttl {
					t.Fatalf("handover took %v, want less than the TTL %v (the leader gave the election up)", r.fromSignal[0], ttl)
				}
				checkCrashes(t, r, ttl, renew)
				// The first child plus one per iteration; fences growing; none overlapping, but
				// the child of a stopped etcd-run, which runs on.
				if r.overlap.children != 4 || (r.overlap.err != nil) != (r.kind == "etcd-run") {
					t.Fatalf("overlap check: %+v, want 4 children, one at a time but for a stopped etcd-run's", r.overlap)
				}
			}
		})
	}
}

// TestCheckOverlap: the run's verdict on its children — a child still running lives until the
// check, and a fence that is not a number or does not grow is a problem.
func TestCheckOverlap(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int64, event string, pid int, fence string) check.ChildEvent {
		return check.ChildEvent{Event: event, PID: pid, Fence: fence, At: t0.Add(time.Duration(ms) * time.Millisecond).UnixNano()}
	}
	now := t0.Add(10 * time.Second)
	if r := checkOverlap([]check.ChildEvent{at(0, "start", 1, "5"), at(100, "stop", 1, "5"), at(110, "start", 2, "6"), at(500, "exit", 2, "6"), at(900, "start", 3, "9")}, nil, now); r.worst != 0 || r.err != nil || r.children != 3 {
		t.Errorf("one child at a time: %+v, want 3 children and no problem", r)
	}
	if r := checkOverlap([]check.ChildEvent{at(0, "start", 1, "5"), at(1000, "start", 2, "6")}, nil, now); r.worst != 9*time.Second || r.err == nil {
		t.Errorf("a child that never logged its end: %+v, want an overlap of 9s (child 2's start until now)", r)
	}
	r := checkOverlap([]check.ChildEvent{at(0, "start", 1, "5"), at(100, "stop", 1, "5"), at(200, "start", 2, "5"), at(300, "stop", 2, "5"), at(400, "start", 3, "x")}, nil, now)
	if r.err == nil || !strings.Contains(r.err.Error(), "numeric fence") || !strings.Contains(r.err.Error(), "fence did not increase") {
		t.Errorf("fences 5, 5, x: %v, want a missing fence and one that did not grow", r.err)
	}
}

// checkCrashes checks a run's failovers and stops against the lease's TTL and renew interval.
// A dead `run`'s successor on this host takes over on the evidence that its guard and child are
// gone, before the lease could expire: sooner than TTL − renew interval, the earliest a lease
// renewed on time expires. A dead etcd-run's successor waits for its lease, which expires TTL
// after the last keepalive: TTL − renew interval after the kill, or sooner when the keepalives
// came late on a loaded machine — never sooner than a renew interval, which would take a
// keepalive two intervals late. A stopped or partitioned leader is taken over only once its
// lease has expired; a stopped or partitioned run's child is stopped by its guard at the
// deadline, a stopped etcd-run's runs on (a partitioned etcd-run's child is killed when its
// client gives the session up, about when etcd expires it: either may come first).
func checkCrashes(t *testing.T, r handoverRun, ttl, renew time.Duration) {
	t.Helper()
	for _, f := range r.failover {
		if ours := r.kind != "etcd-run"; (ours && f >= ttl-renew) || (!ours && f < renew) {
			t.Errorf("%s: failover took %v, with a TTL of %v renewed every %v", r.kind, f, ttl, renew)
		}
	}
	for _, s := range r.stops {
		if s < renew {
			t.Errorf("%s: the stopped leader's successor started %v after SIGSTOP, before its lease could expire (TTL %v, renewed every %v)", r.kind, s, ttl, renew)
		}
	}
	if want := map[bool]int{true: len(r.stops), false: 0}[r.kind == "etcd-run"]; r.ranOn != want {
		t.Errorf("%s: the stopped leader's child ran on %d of %d times, want %d", r.kind, r.ranOn, len(r.stops), want)
	}
	for _, p := range r.partitions {
		if p < renew {
			t.Errorf("%s: the partitioned leader's successor started %v after the cut, before its lease could expire (TTL %v, renewed every %v)", r.kind, p, ttl, renew)
		}
	}
	if r.kind != "etcd-run" && r.cutRanOn != 0 {
		t.Errorf("%s: the partitioned leader's child ran on %d of %d times, want 0", r.kind, r.cutRanOn, len(r.partitions))
	}
}
