package runloop

import "time"

// Defaults of CrashBackoff.
const (
	// DefaultCrashMin is the first back-off after a second crash in a row.
	DefaultCrashMin = time.Second
	// DefaultCrashMax bounds the back-off.
	DefaultCrashMax = 30 * time.Second
	// DefaultHealthyRun is how long a command must run for its exit not to count as a crash.
	DefaultHealthyRun = 10 * time.Second
)

// CrashBackoff spaces out the restarts of a command that keeps crashing: one that exits by
// itself with a non-zero code before it has run HealthyRun. The first crash is restarted as any
// exit is (after the engine's poll interval); each further crash in a row waits twice as long
// as the last, from Min up to Max. A healthy run or a clean exit starts the count again. The
// zero value uses the defaults.
type CrashBackoff struct {
	// Min, Max and HealthyRun override the defaults when positive.
	Min, Max, HealthyRun time.Duration

	crashes int
}

// Crashes is how many crashes in a row the back-off has seen.
func (b *CrashBackoff) Crashes() int { return b.crashes }

// Next records a command that exited with code after running ran, and returns how long to wait
// before contending again: zero unless it crashed at least twice in a row.
func (b *CrashBackoff) Next(ran time.Duration, code int) time.Duration {
	lo, hi, healthy := orDefault(b.Min, DefaultCrashMin), orDefault(b.Max, DefaultCrashMax), orDefault(b.HealthyRun, DefaultHealthyRun)
	if code == 0 || ran >= healthy {
		b.crashes = 0
		return 0
	}
	b.crashes++
	if b.crashes < 2 {
		return 0
	}
	d := lo
	for i := 2; i < b.crashes && d < hi; i++ {
		d *= 2
	}
	return min(d, hi)
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
