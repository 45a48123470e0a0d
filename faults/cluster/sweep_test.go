package cluster_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/cluster"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// sweepHelperEnv makes TestSweepHelper build a cluster and wait to be killed.
const sweepHelperEnv = "LFP_FAULTS_SWEEP_HELPER"

// TestSweepHelper is the process TestSweepRemovesAKilledRun kills: it starts a cluster, prints
// its directory and blocks. It does nothing in a normal run.
func TestSweepHelper(t *testing.T) {
	if os.Getenv(sweepHelperEnv) != "1" {
		return
	}
	c, err := cluster.Start(context.Background(), cluster.Options{})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	fmt.Println("READY", c.Dir)
	select {} // until SIGKILL: no cleanup runs
}

// TestSweepRemovesAKilledRun SIGKILLs a process that runs a cluster — no cleanup can run — and
// checks that the sweep the next Start does removes what it left: namespaces, directory, and
// any engine still running.
func TestSweepRemovesAKilledRun(t *testing.T) {
	leasetest.Long(t, "starts a three-manager Swarm of its own Docker engines")
	if err := cluster.Prerequisites(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v, and CI=true", err)
		}
		t.Skip(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSweepHelper$")
	cmd.Env = append(os.Environ(), sweepHelperEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	var dir string
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "READY "); ok {
			dir = d
			break
		}
		if strings.HasPrefix(sc.Text(), "ERROR") {
			t.Fatal(sc.Text())
		}
	}
	if dir == "" {
		t.Fatal("the helper never reported its cluster")
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	// The engines die with their creator (or are killed by the sweep); the directory and the
	// namespaces stay behind for the sweep.
	id := strings.TrimPrefix(filepath.Base(dir), "run-")
	if m, _ := filepath.Glob("/run/netns/lfpf" + id + "-*"); len(m) != cluster.Nodes+1 {
		t.Fatalf("the killed run left %v, want its %d namespaces for the sweep", m, cluster.Nodes+1)
	}
	if err := cluster.Sweep(t.Logf); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there after the sweep: %v", dir, err)
	}
	if m, _ := filepath.Glob("/run/netns/lfpf" + id + "-*"); len(m) > 0 {
		t.Errorf("network namespaces left after the sweep: %v", m)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(processesNaming(dir)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes of %s still run after the sweep: %v", dir, processesNaming(dir))
		}
		time.Sleep(50 * time.Millisecond) // poll for the killed engines to be gone
	}
}

// processesNaming returns the live processes whose command line names dir.
func processesNaming(dir string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(cmdline), dir+"/") {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(strings.TrimSpace(string(stat[i+1:])), "Z") {
				continue // a zombie waits for its reaper: it runs no more
			}
		}
		line := strings.ReplaceAll(string(cmdline), "\x00", " ")
		found = append(found, e.Name()+": "+line[:min(len(line), 60)])
	}
	return found
}
