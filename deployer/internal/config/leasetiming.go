package config

import (
	"fmt"
	"time"

	"github.com/regbo/lfp-swarm-lease/timing"
)

// stackShutdownTimeout is the child's shutdown timeout that deploy/stack.yml pins
// (SWARM_LEASE_SHUTDOWN_TIMEOUT_MS, whose default the deployer does not change): a leader's
// term ends this long before its deadline.
const stackShutdownTimeout = 1500 * time.Millisecond

// renewInterval is the controllers' renew interval for a lease of ttl: a third of it, the
// default when none is set, as in the stack.
func renewInterval(ttl time.Duration) time.Duration { return ttl / 3 }

// checkLeaseTiming applies the controllers' timing rule to lease_ttl_ms: a TTL the
// controllers would refuse at start-up is found here, before a deploy, instead of in a
// crash-looping service.
func (c *Config) checkLeaseTiming() error {
	ttl := time.Duration(c.LeaseTTLMs) * time.Millisecond
	if timing.Check(ttl, renewInterval(ttl), stackShutdownTimeout) == nil {
		return nil
	}
	return c.invalid("lease_ttl_ms",
		fmt.Sprintf("%d ms leaves no room, with the stack's %v shutdown timeout and a renewal every third of the TTL, before the leader's deadline", c.LeaseTTLMs, stackShutdownTimeout),
		fmt.Sprintf("set %d or more (the default is 5000)", smallestLeaseTTLMs()))
}

// smallestLeaseTTLMs is the smallest whole-millisecond TTL that passes the timing rule.
func smallestLeaseTTLMs() int {
	for ms := 1; ; ms++ {
		ttl := time.Duration(ms) * time.Millisecond
		if timing.Check(ttl, renewInterval(ttl), stackShutdownTimeout) == nil {
			return ms
		}
	}
}
