package rooms

import (
	"context"
	"fmt"
	"sync/atomic"
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

// gatePass is one batch's passage through its Manager's activation gate, let go once: by the
// first of the activating write's WrittenVisible and the end of the batch.
type gatePass struct {
	gate *activationGate
	left atomic.Bool
}

// leave lets the gate go the first time it is called.
func (p *gatePass) leave() {
	if p.left.CompareAndSwap(false, true) {
		p.gate.leave()
	}
}

// gone reports whether the pass has let the gate go.
func (p *gatePass) gone() bool { return p.left.Load() }

// enterActivations admits one activation of the Manager, taking the store's activation lock if
// no other activation of it holds it, and makes p the pass that lets it go.
func (d *docLayout) enterActivations(ctx context.Context, p *gatePass) error {
	g := &d.gate
	select {
	case g.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-g.sem }()
	if g.holders == 0 {
		if d.locker != nil {
			unlock, err := d.locker.LockActivations(ctx, d.ns)
			if err != nil {
				return fmt.Errorf("lock activations: %w", err)
			}
			g.unlock = unlock
		}
	}
	g.holders++
	p.gate = g
	p.left.Store(false)
	return nil
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
