//go:build unix

package supervisor

import "golang.org/x/sys/unix"

// monoNow reads CLOCK_MONOTONIC in nanoseconds. Go's own monotonic readings are relative to
// each process's start; this clock is the same in run and in its guard.
func monoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		// POSIX requires CLOCK_MONOTONIC; a kernel without it cannot run the supervisor safely.
		panic("supervisor: CLOCK_MONOTONIC: " + err.Error())
	}
	return ts.Nano()
}
