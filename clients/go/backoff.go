package swarmlease

import "time"

// backoff computes the waits between connection attempts. The n-th consecutive failure
// (n = 0, 1, ...) waits between min and min·2^(n+1), capped at max: the floor keeps a
// restarted controller from being hammered, the random spread keeps its many clients from
// reconnecting in lockstep, and the doubling ceiling backs off from a controller that stays
// away.
type backoff struct {
	min, max time.Duration
	jitter   func() float64 // in [0, 1)
	failures int
}

// next returns the wait before the next attempt and counts one more failure.
func (b *backoff) next() time.Duration {
	ceiling := b.min
	for i := 0; i <= b.failures && ceiling < b.max; i++ {
		if ceiling > b.max/2 { // doubling would pass max (or overflow)
			ceiling = b.max
			break
		}
		ceiling *= 2
	}
	b.failures++
	j := b.jitter()
	if j < 0 || j >= 1 {
		j = 0 // a broken jitter source must not break the bounds
	}
	return b.min + time.Duration(j*float64(ceiling-b.min))
}

// reset starts the doubling again: the connection worked.
func (b *backoff) reset() { b.failures = 0 }
