package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/etcdstore/etcdtest"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// TestEtcdBenchmarksShort is the short variant of the etcd benchmarks of BENCHMARKS.md ("Rooms
// and run on etcd"), through the benchmark's own code with real processes: the workload on
// etcd's own elections and on two serve replicas of the elections API, both on one
// three-member etcd; the rooms-scale measurement at a few hundred rooms, with a restart of
// serve; and a handover, a failover, a stop and a partition from etcd of `run` on etcd and of
// etcd-run, side by side.
func TestEtcdBenchmarksShort(t *testing.T) {
	leasetest.Long(t, "builds lfp-swarm-lease and runs etcd clusters")
	etcd := etcdtest.Binary(t)
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
		etcd:      etcd, etcdMembers: 3, serveReplicas: 2,
		rounds: 1, clients: 8, handovers: 1, failovers: 1, stops: 1, partitions: 1,
		scaleRooms: []int{200, 400}, scaleSample: 50,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	for _, target := range []target{etcdTarget, roomsEtcdTarget} {
		m, err := measure(ctx, c, target, 400, false)
		if err != nil {
			t.Fatalf("%s: %v", target.name, err)
		}
		t.Logf("%s: %.0f ops/s, p50 %.2f ms, p99 %.2f ms, %.0f µs CPU/op (every server process)", target.name, m.opsPerSec(), ms(m.p(50)), ms(m.p(99)), m.cpuPerOp())
		if m.ops < 400 || m.cpu <= 0 {
			t.Fatalf("%s: %d operations, %v of CPU", target.name, m.ops, m.cpu)
		}
	}

	var table bytes.Buffer
	if err := runScale(ctx, c, &table); err != nil {
		t.Fatal(err)
	}
	t.Log(table.String())
	for _, want := range []string{"| 200 |", "| 400 |", "/readyz 200 after"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the rooms-scale table lacks %q", want)
		}
	}

	runs, err := measureHandovers(ctx, c, []supervisor{supervisors[2], supervisors[1]})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		t.Log(r.report())
		if len(r.fromStop) != 1 || len(r.failover) != 1 || len(r.stops) != 1 || len(r.partitions) != 1 || r.overlap.children != 5 {
			t.Fatalf("%s: %d handovers, %d failovers, %d stops, %d partitions, overlap check %+v",
				r.kind, len(r.fromStop), len(r.failover), len(r.stops), len(r.partitions), r.overlap)
		}
		checkCrashes(t, r, c.leaseTTL(), c.renew())
		if r.kind != "etcd-run" && r.overlap.err != nil {
			t.Errorf("%s: %v", r.kind, r.overlap.err)
		}
		// No more than a TTL and a poll on an idle machine (a second of margin for CI's load).
		if f := r.failover[0]; f > c.leaseTTL()+time.Second {
			t.Errorf("%s: failover took %v with a TTL of %v", r.kind, f, c.leaseTTL())
		}
	}
}
