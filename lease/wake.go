package lease

import "time"

// wakeSpacing spaces the reads that notifications trigger: a notification after a quiet spell
// wakes the reader at once — a follower sees a release as soon as the store reports it, which
// is what a graceful handover waits for — while the notifications of a burst (a busy store, a
// write that notifies twice) wake it at most once per spacing, each wake waiting out the rest
// of the spacing since the previous one.
type wakeSpacing struct {
	spacing time.Duration
	// last is when the previous wake read (Clock.Monotonic); woke tells whether there was one.
	last time.Duration
	woke bool
}

// delay returns how long a notification that arrives at now (Clock.Monotonic) waits before it
// wakes the reader, and counts that wake.
func (w *wakeSpacing) delay(now time.Duration) time.Duration {
	var d time.Duration
	if w.woke {
		d = max(w.last+w.spacing-now, 0)
	}
	w.last, w.woke = now+d, true
	return d
}
