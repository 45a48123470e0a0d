package supervisor

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFirstStopSignalReachesTheCgroupWithoutAScan: the first SIGTERM of a stop reaches every
// process in the command's cgroup — also one in a session of its own, outside the process
// group — from the cgroup's member list, not from a scan of /proc: a descendant of the guard
// outside the cgroup (which only the scan can find) is left to the sweeps, which do find it.
func TestFirstStopSignalReachesTheCgroupWithoutAScan(t *testing.T) {
	cg, err := newCgroup()
	if err != nil {
		t.Skipf("no writable cgroup v2 for a child of this process's cgroup: %v", err)
	}
	g := &guard{self: os.Getpid(), grace: time.Second, cgroup: cg, signalled: map[int]syscall.Signal{}}
	t.Cleanup(g.removeCgroup)
	// As the guard is: the grandchild, orphaned when the command dies, stays a descendant.
	becomeSubreaper()

	// A descendant of the guard (this process) outside the cgroup, as a process that moved
	// itself out would be.
	outside := exec.Command("sleep", "300")
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	outsideDone := make(chan *os.ProcessState, 1)
	go func() { _ = outside.Wait(); outsideDone <- outside.ProcessState }()
	t.Cleanup(func() { _ = outside.Process.Kill() })

	proc, err := g.start([]string{"/bin/sh", "-c", "setsid sleep 300 & exec sleep 300"}, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	g.main = proc.Pid
	mainDone := make(chan *os.ProcessState, 1)
	go func() { st, _ := proc.Wait(); mainDone <- st }()

	members := waitForSleepers(t, g.cgroup.dir, 2)
	var grandchild process
	for _, p := range members {
		if p.pid != g.main {
			grandchild = p
		}
	}
	if grandchild.pgid == g.main {
		t.Fatalf("the grandchild %+v is in the command's process group: the test needs it outside", grandchild)
	}

	g.signalAll(syscall.SIGTERM, false)

	if g.signalled[grandchild.pid] != syscall.SIGTERM || g.signalled[g.main] != syscall.SIGTERM {
		t.Fatalf("signalled %v, want SIGTERM for the command %d and its grandchild %d", g.signalled, g.main, grandchild.pid)
	}
	expectTerminated(t, mainDone, "the command, after the first pass")
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(grandchild.pid, &ws, 0, nil); err != nil || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("the grandchild ended with %v (%v), want SIGTERM", ws, err)
	}
	if _, alive := readProcess(outside.Process.Pid); !alive || g.signalled[outside.Process.Pid] != 0 {
		t.Fatalf("the process outside the cgroup was signalled by the first pass (alive %v, signalled %v)", alive, g.signalled)
	}

	g.signalAll(syscall.SIGTERM, true)
	expectTerminated(t, outsideDone, "the process outside the cgroup, after the scan")
}

// expectTerminated waits for the state of what on done and fails unless SIGTERM ended it.
func expectTerminated(t *testing.T, done <-chan *os.ProcessState, what string) {
	t.Helper()
	select {
	case st := <-done:
		if ws := st.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
			t.Fatalf("%s ended with %v, want SIGTERM", what, st)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s still runs", what)
	}
}

// waitForSleepers waits until the cgroup at dir holds n live processes, all of them running
// sleep (exec'd, not still the shell or setsid), and returns them.
func waitForSleepers(t *testing.T, dir string, n int) []process {
	t.Helper()
	var members []process
	waitUntil(t, 10*time.Second, "the command and its grandchild to run sleep", func() bool {
		members = cgroupMembers(dir)
		if len(members) != n {
			return false
		}
		for _, p := range members {
			comm, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/comm")
			if err != nil || strings.TrimSpace(string(comm)) != "sleep" {
				return false
			}
		}
		return true
	})
	return members
}

// waitUntil polls ok every millisecond until it holds, failing the test after timeout.
func waitUntil(t *testing.T, timeout time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(time.Millisecond)
	}
}
