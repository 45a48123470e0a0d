package lease

import "time"

// wakeSpacing spaces the reads that notifications trigger: a notification after a quiet spell
// wakes the reader at once — a follower sees a release as soon as the store reports it, which
// is what a graceful handover waits for — while the notifications of a burst (a busy store, a
// write that notifies twice) wake it at most once per spacing on average.
//
// burst notifications in a row may wake it at once before the spacing applies. With a burst
// of 2, a release that comes right after the holder's renewal (both notify) is read at once
// too, instead of waiting out the spacing that the renewal's wake started. A release falls
// within the spacing after a renewal in spacing / renew interval of the handovers (5–8 % with
// 50 ms and renewals every 0.67–1 s), each of which would be late by up to the spacing. The
// average rate stays one wake per spacing (a generic cell rate algorithm).
type wakeSpacing struct {
	spacing time.Duration
	// burst is how many notifications in a row wake at once (0 or 1: only one).
	burst int
	// next is when (Clock.Monotonic) a wake is due at the sustained rate: a notification
	// wakes at once while next is within (burst-1) spacings from now.
	next time.Duration
	woke bool
}

// delay returns how long a notification that arrives at now (Clock.Monotonic) waits before it
// wakes the reader, and counts that wake.
func (w *wakeSpacing) delay(now time.Duration) time.Duration {
	if !w.woke {
		w.next, w.woke = now, true
	}
	due := max(w.next, now)
	slack := time.Duration(max(w.burst, 1)-1) * w.spacing
	d := max(due-now-slack, 0)
	w.next = due + w.spacing
	return d
}
