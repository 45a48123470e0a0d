package supervisor

import "time"

// Deadline is an instant of the host's monotonic clock (CLOCK_MONOTONIC on Unix): one clock for
// every process of the host, which never jumps with the wall clock. run hands its term's
// deadline to the guard as a Deadline, and each process then measures it on its own: a
// stopped or blocked run cannot keep the guard from acting on time. The zero Deadline is none.
type Deadline struct{ ns int64 }

// DeadlineIn is the instant remaining() from now. The clock is read before remaining is
// called: a pause between the two (a process stopped there) can only bring the deadline
// nearer, never push it later.
func DeadlineIn(remaining func() time.Duration) Deadline {
	now := monoNow()
	return Deadline{ns: now + int64(remaining())}
}

// IsZero reports whether d is no deadline.
func (d Deadline) IsZero() bool { return d.ns == 0 }

// Until is how long from now d is (negative once it has passed).
func (d Deadline) Until() time.Duration { return time.Duration(d.ns - monoNow()) }
