// Package check holds the fault campaign's checkers: the children of the `run` supervisors
// never overlap and their fences only grow (Children), and the history of one-shot lease
// operations is linearizable, faults and unknown outcomes included, its refusals allowed to be
// decided on stale reads (LeaseHistory).
package check

import "golang.org/x/sys/unix"

// Monotonic reads CLOCK_MONOTONIC in nanoseconds: the clock the fault children stamp their
// events with, shared by every process on this kernel.
func Monotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("CLOCK_MONOTONIC: " + err.Error()) // Linux always has it
	}
	return ts.Nano()
}
