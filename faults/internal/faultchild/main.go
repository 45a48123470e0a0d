// Command faultchild is the leader-only child of the fault tests' `lfp-swarm-lease run`
// supervisors. It appends a line to the file named by FAULTCHILD_LOG when it starts and when
// SIGTERM stops it, a check.ChildEvent:
//
//	{"event":"start","fence":"7","holder_id":"node1-a","task_id":"…","pid":4242,"hostname":"…","t":<CLOCK_MONOTONIC ns>}
//
// Every child of a test runs on one kernel — in a Swarm task's container too, whose log is a
// bind mount of the host's — so the timestamps of all children, and of the test itself, come
// from one clock that no wall-clock step can move, and two children's terms can be compared to
// the nanosecond. The hostname tells apart the children of different containers, whose PIDs,
// counted in each container's own PID namespace, repeat.
//
// Every child also locks the file FAULTCHILD_LOG.lock (flock) for as long as it lives: one
// that finds it locked logs "overlap" before its start — another child still lives — and takes
// the lock once that one is gone. The kernel drops a lock when its holder dies, however it
// dies, so this sees the overlap of a child that was killed with its container and could log
// no stop.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/regbo/lfp-swarm-lease/faults/check"
)

func logLine(event string) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		fail(err)
	}
	host, _ := os.Hostname()
	line, _ := json.Marshal(check.ChildEvent{Event: event, Fence: os.Getenv("SWARM_LEASE_FENCE"),
		HolderID: os.Getenv("SWARM_LEASE_HOLDER_ID"), TaskID: os.Getenv("SWARM_LEASE_TASK_ID"), PID: os.Getpid(), Hostname: host, At: ts.Nano()})
	// One write of one line with O_APPEND: lines of concurrent children never interleave.
	f, err := os.OpenFile(os.Getenv("FAULTCHILD_LOG"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fail(err)
	}
	_, err = f.Write(append(line, '\n'))
	if err = errors.Join(err, f.Close()); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "faultchild:", err)
	os.Exit(3)
}

// lockExclusive locks path for the life of the process and reports whether it was free. A raw
// descriptor, which no finalizer closes, keeps it locked until the process ends; a lock held by
// another child is waited for in the background, so that this child's start is not delayed.
func lockExclusive(path string) bool {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		fail(err)
	}
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) == nil {
		return true
	}
	go func() {
		for unix.Flock(fd, unix.LOCK_EX) == unix.EINTR {
		}
	}()
	return false
}

func main() {
	if os.Getenv("FAULTCHILD_LOG") == "" {
		fmt.Fprintln(os.Stderr, "faultchild: FAULTCHILD_LOG is not set: it names the event log to append to")
		os.Exit(2)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	if !lockExclusive(os.Getenv("FAULTCHILD_LOG") + ".lock") {
		logLine("overlap")
	}
	logLine("start")
	<-sigs
	logLine("stop")
}
