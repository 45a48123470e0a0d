// Package heapfloor keeps the garbage collector from running while the live heap is small: a
// process serving the elections API calls Keep once, at start.
//
// A request served allocates about 3 KB that is garbage once it is answered — net/http's
// request, its header maps, contexts, the answer's header, most of it not ours to avoid — while
// the live heap of a serving process is small (~1.3 MB with a few rooms, most of it connection
// buffers). With GOGC's default the collector runs whenever the heap reaches its 4 MB minimum:
// every ~700 requests, some 40 cycles a second under the elections benchmark's load, each
// scanning every connection's goroutine stack — a tenth of the server's CPU.
//
// Keep lets the heap reach 6 MB (heapFloorBytes) before a cycle while what is live is small, and
// leaves GOGC's default alone otherwise: the collector's goal is max(heapFloorBytes, twice the
// live heap), where GOGC=100 makes it max(4 MB, twice the live heap). A process holding many
// rooms (a live heap of half the floor or more) collects exactly as before, and one holding few
// grows by at most the floor's extra 2 MB. A GOGC set in the environment is the operator's
// choice and is left alone.
//
// Measured under the peer benchmark's load (bench-peers, memory store): half the cycles
// and about a tenth less server CPU per request; a floor of 8 MB saved no more, for up to twice the
// memory. The RSS after 1,000 campaigns grows by ~1.5 MB, after 10,000 not at all.
package heapfloor
