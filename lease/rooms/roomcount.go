package rooms

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// roomCounter is a Manager's count of the active rooms on a RoomStore. The store counts them
// itself, from its expiry index, without reading a room (RoomStore.CountRooms); the Manager
// adds its own activations since that count and those in flight. The count is taken again when
// it is older than its max age (maxAge), and whenever the limit is in reach — after the
// Manager's activations in flight have ended, so that the count then includes every one of
// them and is exact within the process: a refusal is only ever decided on such a count.
// Activations by other processes show from the next count (docs/rooms.md §3).
type roomCounter struct {
	mu   sync.Mutex
	done sync.Cond // signalled when inflight drops; its L is mu

	valid    bool
	at       time.Duration // Clock.Monotonic when the count was taken
	active   int           // live rooms the store counted
	firstMs  int64         // the earliest expires_at among them (Unix ms), 0 when none
	since    int           // this Manager's activations ended since the count
	inflight int           // this Manager's activations decided and not yet written
}

// capacity returns the active rooms for a decision at now of a batch of n operations; the
// caller holds the Manager's decision lock.
func (c *roomCounter) capacity(ctx context.Context, m *keyLayout, now time.Time, n int) (capacity, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stale := !c.valid || m.clock.Monotonic()-c.at >= c.maxAge(m.Manager)
	if stale || c.active+c.since+c.inflight+n >= m.maxActive {
		for c.inflight > 0 { // their writes end within the store timeout
			c.done.Wait()
		}
		at := m.clock.Monotonic()
		c.mu.Unlock()
		active, firstMs, err := m.rs.CountRooms(ctx, m.ns, m.shards, now.Add(-m.skew).UnixMilli())
		c.mu.Lock()
		if err != nil {
			c.valid = false
			return capacity{}, fmt.Errorf("count active rooms: %w", err)
		}
		// Nothing else changed the counter meanwhile: activations are decided under the lock
		// the caller holds.
		c.valid, c.at, c.active, c.firstMs, c.since = true, at, active, firstMs, 0
	}
	cp := capacity{active: c.active + c.since + c.inflight}
	if c.firstMs != 0 {
		cp.firstEnd = time.UnixMilli(c.firstMs).Add(m.skew)
	}
	return cp, nil
}

// A count is linear in the live rooms (etcd counts the index entries one by one, holding its
// index's lock meanwhile: about half a second at a million rooms here), so it is not taken
// every count max age when the limit is far: other processes' activations, which only a new
// count shows, cannot close the distance faster than activationRate, so a count may be as old
// as the distance takes at that rate — at most maxCountAge — before the next. Near the limit
// the count max age holds, and at it every decision counts again.
const (
	// activationRate is an upper bound on the activations per second of every process
	// together: above etcd's measured throughput (BENCHMARKS.md).
	activationRate = 20_000
	// maxCountAge bounds the age of a count far from the limit.
	maxCountAge = 30 * time.Second
)

// maxAge is how old the count may be for the next decision; the caller holds c.mu.
func (c *roomCounter) maxAge(m *Manager) time.Duration {
	if m.countMaxAge == 0 || !c.valid {
		return m.countMaxAge
	}
	room := m.maxActive - c.active - c.since - c.inflight
	far := time.Duration(room) * time.Second / activationRate
	return max(m.countMaxAge, min(far, maxCountAge))
}

// near reports whether n more activations may reach the limit by the last count (or there is
// none).
func (c *roomCounter) near(m *Manager, n int) bool {
	if m.maxActive <= 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.valid || c.active+c.since+c.inflight+n >= m.maxActive
}

// begin registers n activations decided and about to be written.
func (c *roomCounter) begin(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inflight += n
}

// end ends n activations registered by begin. Those that may have been written count until
// the next count, also when their write failed (the limit errs on the side of refusing); the
// others were never written: a decision taken again on a read, a write whose condition failed.
func (c *roomCounter) end(n int, maybeWritten bool) {
	if n == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inflight -= n
	if maybeWritten {
		c.since += n
	}
	c.done.Broadcast()
}
