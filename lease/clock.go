package lease

import "time"

// Clock is the engine's source of time. Wall time stamps records and is compared with recorded
// expiry; monotonic time measures every safety-relevant interval.
type Clock interface {
	// Now returns the wall-clock time.
	Now() time.Time
	// Monotonic returns the time elapsed since an arbitrary, fixed origin. It never jumps, and
	// only differences between two readings of the same Clock mean anything.
	Monotonic() time.Duration
}

// SystemClock is the real clock: time.Now for the wall, the runtime's monotonic clock for
// intervals.
type SystemClock struct{}

var processStart = time.Now()

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now() }

// Monotonic implements Clock.
func (SystemClock) Monotonic() time.Duration { return time.Since(processStart) }
