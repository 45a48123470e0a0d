// Command faultchild is the leader-only child of the fault tests' `lfp-swarm-lease run`
// supervisors. It appends a line to the file named by FAULTCHILD_LOG when it starts and when
// SIGTERM stops it, a check.ChildEvent:
//
//	{"event":"start","fence":"7","holder_id":"node1-a","pid":4242,"t":<CLOCK_MONOTONIC ns>}
//
// Every child of a test runs on one kernel, so the timestamps of all children — and of the test
// itself — come from one clock that no wall-clock step can move, and two children's terms can be
// compared to the nanosecond.
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
		fmt.Fprintln(os.Stderr, "faultchild:", err)
		os.Exit(3)
	}
	line, _ := json.Marshal(check.ChildEvent{Event: event, Fence: os.Getenv("SWARM_LEASE_FENCE"),
		HolderID: os.Getenv("SWARM_LEASE_HOLDER_ID"), PID: os.Getpid(), At: ts.Nano()})
	// One write of one line with O_APPEND: lines of concurrent children never interleave.
	f, err := os.OpenFile(os.Getenv("FAULTCHILD_LOG"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultchild:", err)
		os.Exit(3)
	}
	_, err = f.Write(append(line, '\n'))
	if err = errors.Join(err, f.Close()); err != nil {
		fmt.Fprintln(os.Stderr, "faultchild:", err)
		os.Exit(3)
	}
}

func main() {
	if os.Getenv("FAULTCHILD_LOG") == "" {
		fmt.Fprintln(os.Stderr, "faultchild: FAULTCHILD_LOG is not set: it names the event log to append to")
		os.Exit(2)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	logLine("start")
	<-sigs
	logLine("stop")
}
