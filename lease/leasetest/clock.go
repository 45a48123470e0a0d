// Package leasetest holds what the tests of lfp-swarm-lease share: a deterministic clock, the
// behavioural suite every lease.Store must pass, and the switch that finds the test Swarm.
package leasetest

import (
	"sync"
	"time"
)

// FakeClock is a lease.Clock that moves only when told. Its wall clock and its monotonic clock
// can be moved apart, to model clock skew and wall-clock jumps.
type FakeClock struct {
	mu   sync.Mutex
	wall time.Time
	mono time.Duration
}

// NewFakeClock returns a clock whose wall reads start.
func NewFakeClock(start time.Time) *FakeClock { return &FakeClock{wall: start} }

// Now implements lease.Clock.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wall
}

// Monotonic implements lease.Clock.
func (c *FakeClock) Monotonic() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mono
}

// Advance moves both clocks forward by d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall = c.wall.Add(d)
	c.mono += d
}

// JumpWall moves only the wall clock by d (negative: backwards), as an NTP step or a
// misconfigured host would.
func (c *FakeClock) JumpWall(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall = c.wall.Add(d)
}
