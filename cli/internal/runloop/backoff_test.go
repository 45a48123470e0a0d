package runloop

import (
	"testing"
	"time"
)

// TestCrashBackoff: the second quick crash in a row waits Min, each further one twice as long up
// to Max; a healthy run or a clean exit resets the count.
func TestCrashBackoff(t *testing.T) {
	var b CrashBackoff
	quick := time.Second
	want := []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		if got := b.Next(quick, 1); got != w {
			t.Fatalf("crash %d: %v, want %v", i+1, got, w)
		}
	}
	if got := b.Next(DefaultHealthyRun, 1); got != 0 || b.Crashes() != 0 {
		t.Fatalf("after a healthy run: %v, %d crashes", got, b.Crashes())
	}
	b.Next(quick, 1)
	if got := b.Next(quick, 0); got != 0 || b.Crashes() != 0 {
		t.Fatalf("after a clean exit: %v, %d crashes", got, b.Crashes())
	}
	custom := CrashBackoff{Min: 10 * time.Millisecond, Max: 15 * time.Millisecond, HealthyRun: time.Minute}
	for i, w := range []time.Duration{0, 10 * time.Millisecond, 15 * time.Millisecond} {
		if got := custom.Next(30*time.Second, 2); got != w {
			t.Fatalf("custom crash %d: %v, want %v", i+1, got, w)
		}
	}
}
