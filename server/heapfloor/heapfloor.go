package heapfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// heapFloorBytes is the heap size below which the collector does not run (the goal's floor).
const heapFloorBytes = 6 << 20

// runtimeHeapMinimum is the Go runtime's heap minimum at GOGC=100, which scales with GOGC.
const runtimeHeapMinimum = 4 << 20

var keepOnce sync.Once

// Keep starts adjusting the GC percentage after every collection (see heapFloor), unless GOGC
// is set. It changes the runtime's settings for the whole process: the command that serves the
// elections API calls it, at start. Calling it again changes nothing.
func Keep() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	keepOnce.Do(func() {
		f := &heapFloor{percent: 100}
		f.live[0].Name = "/gc/heap/live:bytes"
		f.arm()
	})
}

// heapFloor adjusts the GC percentage to the live heap, from the cleanup of an object each
// collection finds unreachable: it runs once per cycle and costs nothing while nothing is
// collected.
type heapFloor struct {
	live    [1]metrics.Sample
	percent int // the percentage set last
}

// cycleMark is the object whose cleanup follows a collection. It holds a pointer so that it is
// not a tiny allocation, which shares its block with others and would be freed late.
type cycleMark struct{ _ *byte }

func (f *heapFloor) arm() {
	runtime.AddCleanup(new(cycleMark), func(f *heapFloor) {
		f.adjust()
		f.arm()
	}, f)
}

func (f *heapFloor) adjust() {
	metrics.Read(f.live[:])
	if f.live[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	// A change of a few points is not worth the heap lock SetGCPercent takes.
	if p := floorPercent(f.live[0].Value.Uint64()); p > f.percent+5 || p < f.percent-5 || (p == 100 && f.percent != 100) {
		debug.SetGCPercent(p)
		f.percent = p
	}
}

// floorPercent is the GC percentage whose goal for a live heap of live bytes is
// max(heapFloorBytes, 2×live). The runtime's goal is max(live × (1 + p/100), its heap minimum
// × p/100): p is the larger of 100 and the smaller of the percentages at which either term
// reaches the floor.
func floorPercent(live uint64) int {
	if 2*live >= heapFloorBytes {
		return 100
	}
	byMinimum := 100 * heapFloorBytes / runtimeHeapMinimum
	if live == 0 {
		return byMinimum
	}
	byLive := int(100 * (heapFloorBytes - live) / live)
	return max(100, min(byMinimum, byLive))
}
