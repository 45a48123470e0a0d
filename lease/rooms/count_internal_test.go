package rooms

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestCountAgreesWithLive: however often a document is counted and however the time moves,
// the count of its live rooms and their first end are what Manager.live and the rooms'
// expiries say — up to the millisecond, with a skew of a fraction of one, and for expiries
// outside the range of nanoseconds since 1970.
func TestCountAgreesWithLive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	start := time.UnixMilli(1_764_000_000_000)
	for _, skew := range []time.Duration{0, 1500 * time.Microsecond, 2 * time.Second} {
		m, err := New(NewMemoryStore(), "count", WithMaxClockSkew(skew))
		if err != nil {
			t.Fatal(err)
		}
		for trial := range 200 {
			doc := newShard(ShardKey{Namespace: "count"}, 1, start)
			for i := range rng.IntN(6) {
				ms := start.UnixMilli() + rng.Int64N(4000)
				switch rng.IntN(8) {
				case 0:
					ms = math.MaxInt64 - rng.Int64N(3)
				case 1:
					ms = math.MinInt64 + rng.Int64N(3)
				}
				doc.Rooms.set(fmt.Sprintf("room-%04d", i), roomEntry{Candidate: "c", Term: 1, ExpiresMs: ms, TTLSec: 5})
			}
			ends := docEnds{doc: doc}
			now := start
			for range 12 {
				now = now.Add(time.Duration(rng.IntN(1200)) * time.Millisecond)
				wantN, wantFirst := 0, time.Time{}
				for _, e := range doc.Rooms.all() {
					if m.live(e, now) {
						wantN++
						if end := e.expiresAt().Add(skew); wantFirst.IsZero() || end.Before(wantFirst) {
							wantFirst = end
						}
					}
				}
				n, first := ends.liveAt(now.UnixNano(), skew.Nanoseconds())
				if n != wantN {
					t.Fatalf("skew %v, trial %d, at %v: %d live, want %d", skew, trial, now, n, wantN)
				}
				// The first end is exact within the nanoseconds' range, and after now beyond it.
				if !wantFirst.IsZero() && wantFirst.Year() < 2200 && first != wantFirst.UnixNano() {
					t.Fatalf("skew %v, trial %d, at %v: first end %d, want %v", skew, trial, now, first, wantFirst)
				}
				if (first == noEnd) != (n == 0) || (first != noEnd && first <= now.UnixNano()) {
					t.Fatalf("skew %v, trial %d, at %v: first end %d with %d live", skew, trial, now, first, n)
				}
			}
		}
	}
}
