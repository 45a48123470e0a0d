package wire

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestWireTimeWritesWhatFormatWrites: Time writes what time.Format writes for the contract's layout, in
// UTC — for any location, at the edges of seconds, days and years, and outside the years of
// four digits.
func TestWireTimeWritesWhatFormatWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	zone := time.FixedZone("east", 5*3600+30*60)
	times := []time.Time{
		time.Unix(0, 0), time.Unix(-1, 999_999_999), time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 6, 1, 12, 0, 0, 0, time.UTC), time.Date(2024, 2, 29, 23, 59, 59, 999_000_000, zone),
		time.UnixMilli(1_764_000_000_123).In(zone),
	}
	for range 20000 {
		times = append(times, time.Unix(rng.Int64N(1<<37)-1<<36, rng.Int64N(1e9)).In(zone))
	}
	for _, tm := range times {
		if got, want := Time(tm), tm.UTC().Format(TimeLayout); got != want {
			t.Fatalf("%v: %s, want %s", tm, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = Time(times[7]) }); n > 1 {
		t.Errorf("%.0f allocations, want at most 1 (the string)", n)
	}
}
