package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Sweep removes what runs whose process is gone left behind — a test binary that was SIGKILLed
// or timed out cannot clean up: their dockerds and containerds (found by their command lines
// naming the run directory), their network namespaces, and their run directories. Runs of live
// processes are left alone.
func Sweep(logf func(format string, args ...any)) error {
	dead := map[string]bool{} // run id → its process is gone
	entries, err := os.ReadDir(Root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cluster sweep: %w", err)
	}
	for _, e := range entries {
		if id, ok := strings.CutPrefix(e.Name(), "run-"); ok && !processAlive(id) {
			dead[id] = true
		}
	}
	namespaces, _ := os.ReadDir("/run/netns")
	for _, e := range namespaces {
		if rest, ok := strings.CutPrefix(e.Name(), netnsPrefix); ok {
			if id, _, ok := strings.Cut(rest, "-"); ok && !processAlive(id) {
				dead[id] = true
			}
		}
	}
	var errs []error
	for id := range dead {
		logf("sweeping the leftovers of dead run %s", id)
		errs = append(errs, removeRun(filepath.Join(Root, "run-"+id), logf))
	}
	return errors.Join(errs...)
}

// processAlive reports whether the process with PID id runs.
func processAlive(id string) bool {
	pid, err := strconv.Atoi(id)
	if err != nil || pid <= 0 {
		return false
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// removeRun kills every process whose command line names dir, deletes the run's network
// namespaces and removes dir.
func removeRun(dir string, logf func(format string, args ...any)) error {
	procs, _ := os.ReadDir("/proc")
	var killed []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if ownedBy(pid, dir) {
			_ = syscall.Kill(pid, syscall.SIGCONT)
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed = append(killed, pid)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		alive := 0
		for _, pid := range killed {
			if ownedBy(pid, dir) {
				alive++
			}
		}
		if alive == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond) // poll for the kernel to finish the SIGKILLed processes
	}
	if len(killed) > 0 {
		logf("killed %d leftover processes of %s", len(killed), dir)
	}
	var errs []error
	id := strings.TrimPrefix(filepath.Base(dir), "run-")
	namespaces, _ := os.ReadDir("/run/netns")
	for _, e := range namespaces {
		if strings.HasPrefix(e.Name(), netnsPrefix+id+"-") {
			// Another process's sweep may have deleted it in the meantime.
			if err := run("ip", "netns", "del", e.Name()); err != nil && fileExists("/run/netns/"+e.Name()) {
				errs = append(errs, err)
			}
		}
	}
	// dockerd may have left mounts below its data root in the host's namespace only if
	// propagation leaked; unmount whatever is there before removing the tree.
	if mounts, err := os.ReadFile("/proc/self/mounts"); err == nil {
		for _, line := range strings.Split(string(mounts), "\n") {
			if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], dir+"/") {
				_ = syscall.Unmount(f[1], syscall.MNT_DETACH)
			}
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		errs = append(errs, fmt.Errorf("cluster: remove %s: %w", dir, err))
	}
	return errors.Join(errs...)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
