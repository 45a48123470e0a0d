package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/cluster"
)

// TestClusterFaults builds a cluster and checks that each fault does what it says: a killed
// manager is seen unreachable and comes back; a partitioned one too; and that Close leaves
// nothing behind.
func TestClusterFaults(t *testing.T) {
	c := cluster.ForTest(t)
	ctx := t.Context()
	leader, err := c.Leader(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	follower := leader%cluster.Nodes + 1
	other := follower%cluster.Nodes + 1
	if other == leader {
		other = follower%cluster.Nodes + 2
	}
	if err := c.Kill(follower); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, other, follower, "Unreachable")
	if err := c.StartNode(ctx, follower); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitManagers(ctx, other, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := c.Partition(follower); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, other, follower, "Unreachable")
	if err := c.Heal(follower); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitManagers(ctx, other, time.Minute); err != nil {
		t.Fatal(err)
	}
	dir := c.Dir
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there after Close: %v", dir, err)
	}
	if m, _ := filepath.Glob("/run/netns/lfpf" + filepath.Base(dir)[len("run-"):] + "-*"); len(m) > 0 {
		t.Errorf("network namespaces left after Close: %v", m)
	}
}

// waitStatus polls manager via until it reports manager n in status.
func waitStatus(t *testing.T, c *cluster.Cluster, via, n int, status string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		got, err := c.Managers(ctx, via)
		cancel()
		if err == nil && got[n] == status {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node%d never saw node%d %s: %v %v", via, n, status, got, err)
		}
		time.Sleep(200 * time.Millisecond) // poll the manager list
	}
}
