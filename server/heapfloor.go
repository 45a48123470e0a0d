package server

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// A request served allocates about 3 KB that is garbage once it is answered — net/http's
// request, its header maps, contexts, the answer's header, most of it not ours to avoid — while
// the live heap of a serving process is small (~1.3 MB with a few rooms, most of it connection
// buffers). With GOGC's default the collector runs whenever the heap reaches its 4 MB minimum:
// every ~700 requests, some 40 cycles a second under the elections benchmark's load, each
// scanning every connection's goroutine stack — a tenth of the server's CPU.
//
// heapFloor lets the heap reach heapFloorBytes before a cycle while what is live is small, and
// leaves GOGC's default alone otherwise: the collector's goal is max(heapFloorBytes, twice the
// live heap), where GOGC=100 makes it max(4 MB, twice the live heap). A process holding many
// rooms (a live heap of half the floor or more) collects exactly as before, and one holding few
// grows by at most the floor's extra 2 MB. A GOGC set in the environment is the operator's
// choice and is left alone.
//
// Measured under the peer benchmark's load (bench-peers, memory store): half the cycles
// and about a tenth less server CPU per request; a floor of 8 MB saved no more, for up to twice the
// memory. The RSS after 1,000 campaigns grows by ~1.5 MB, after 10,000 not at all.

// heapFloorBytes is the heap size below which the collector does not run (the goal's floor).
const heapFloorBytes = 6 << 20

// runtimeHeapMinimum is the Go runtime's heap minimum at GOGC=100, which scales with GOGC.
const runtimeHeapMinimum = 4 << 20

var heapFloorOnce sync.Once

// keepHeapFloor starts adjusting the GC percentage after every collection (see heapFloor),
// once per process, unless GOGC is set.
func keepHeapFloor() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	heapFloorOnce.Do(func() {
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
