package lease

import (
	"testing"
	"time"
)

// TestWakeSpacingWakesAtOnceAfterQuiet: the first notification and one after a quiet spell wake
// at once; the notifications of a burst wait out the rest of the spacing since the last wake.
func TestWakeSpacingWakesAtOnceAfterQuiet(t *testing.T) {
	w := &wakeSpacing{spacing: 50 * time.Millisecond}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, step := range []struct {
		at, want time.Duration
	}{
		{at: ms(1000), want: 0},      // first notification
		{at: ms(1010), want: ms(40)}, // a burst: waits until 1050
		{at: ms(1060), want: ms(40)}, // still the burst: the last wake was at 1050, next at 1100
		{at: ms(2000), want: 0},      // quiet since: at once
		{at: ms(2050), want: 0},      // exactly one spacing later
		{at: ms(2051), want: ms(49)},
	} {
		if got := w.delay(step.at); got != step.want {
			t.Fatalf("notification at %v: waits %v, want %v", step.at, got, step.want)
		}
	}
}

// TestWakeSpacingBurst: with a burst of 2, two notifications in a row wake at once — a renewal
// and the release right after it — and the rest of the burst is spaced to one wake per spacing
// on average.
func TestWakeSpacingBurst(t *testing.T) {
	w := &wakeSpacing{spacing: 50 * time.Millisecond, burst: 2}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, step := range []struct {
		at, want time.Duration
	}{
		{at: ms(1000), want: 0},      // a renewal
		{at: ms(1020), want: 0},      // the release, 20 ms later: at once
		{at: ms(1025), want: ms(25)}, // a third in a row: at 1050
		{at: ms(1030), want: ms(70)}, // and a fourth at 1100: one per spacing
		{at: ms(2000), want: 0},      // quiet since: the burst is available again
		{at: ms(2001), want: 0},
		{at: ms(2002), want: ms(48)},
	} {
		if got := w.delay(step.at); got != step.want {
			t.Fatalf("notification at %v: waits %v, want %v", step.at, got, step.want)
		}
	}
}
