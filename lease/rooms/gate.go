package rooms

import (
	"context"
	"fmt"
	"sync"
)

// activationGate lets a Manager's activations run side by side while the store's activation lock
// (ActivationLocker) keeps other Managers' activations out: the first activation to enter takes
// the store's lock, later ones share it, and the last one to leave releases it. Within the
// Manager the count stays exact without serialising the writes: an activation counts, decides
// and announces its write (activeIndex.begin) under the Manager's decision lock, which it holds
// for microseconds, and writes outside it; the next count sees the written document. Across
// Managers nothing changes: while one holds the store's lock no other activates, and each
// re-reads the shards others changed before it counts.
//
// The store's lock is taken once per burst of overlapping activations, not once per activation.
// A Manager that activates without pause keeps it for as long as its activations overlap; the
// others wait, as they did for each activation before.
type activationGate struct {
	// sem guards holders and unlock (a channel, so that waiting honours a context); it is
	// held while the store's lock is being taken.
	sem     chan struct{}
	holders int
	unlock  func()
}

// enter admits one activation of m, taking the store's activation lock if no other activation
// of m holds it, and returns the function (safe to call more than once) that lets it go.
func (m *Manager) enterActivations(ctx context.Context) (func(), error) {
	g := &m.gate
	select {
	case g.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-g.sem }()
	if g.holders == 0 {
		if l, ok := m.store.(ActivationLocker); ok {
			unlock, err := l.LockActivations(ctx, m.ns)
			if err != nil {
				return nil, fmt.Errorf("lock activations: %w", err)
			}
			g.unlock = unlock
		}
	}
	g.holders++
	return sync.OnceFunc(g.leave), nil
}

// leave ends one activation; the last one releases the store's lock.
func (g *activationGate) leave() {
	g.sem <- struct{}{}
	defer func() { <-g.sem }()
	if g.holders--; g.holders == 0 && g.unlock != nil {
		g.unlock()
		g.unlock = nil
	}
}
