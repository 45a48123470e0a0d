package timeline

import (
	"context"
	"fmt"
	"time"

	"github.com/regbo/lfp-swarm-lease/demo/ledger"
)

// How the ledger learns whether a fence was issued.
const (
	// viewAge bounds how old a controller's view of the election may be: a replica reads the
	// store at least every poll interval (1 s in the stack) and serves what it read at once.
	viewAge = 2 * time.Second
	// issuedWait bounds Issued: viewAge, then a read's answer.
	issuedWait = viewAge + time.Second
	// readSpacing is the least time between two reads of the state (a waiting write asks for
	// one at once, and again after each read that did not decide).
	readSpacing = 100 * time.Millisecond
)

// Issued returns the highest fence the election has issued, as ledger.Election asks. Every
// fence a state showed stays issued, so a fence at or below the highest seen is answered at
// once. A higher one may be the fence of a term that began a moment ago — its worker writes as
// soon as it wins — which the controllers' views, each up to viewAge old, may not show yet: the
// follower reads the state at once and again after every read until one shows the fence, or
// until a read that began viewAge after the write came still shows the election below it. Only
// then is the fence known not to have been issued. When no such read answers within
// issuedWait (or ctx ends), Issued fails with ledger.ErrElectionUnknown: it does not guess.
// Issued needs Follow running.
func (t *Timeline) Issued(ctx context.Context, fence uint64) (uint64, error) {
	came := t.now()
	ctx, cancel := context.WithTimeout(ctx, issuedWait)
	defer cancel()
	for {
		t.mu.Lock()
		issued, readAt, changed := t.issued, t.readAt, t.changed
		t.mu.Unlock()
		if fence <= issued || readAt.Sub(came) >= viewAge {
			return issued, nil
		}
		select {
		case t.hurry <- struct{}{}:
		default: // a read is asked for already
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return issued, fmt.Errorf("%w: the controllers did not answer in time to tell whether fence %d was issued (the highest seen is %d); nothing was recorded: try again", ledger.ErrElectionUnknown, fence, issued)
		}
	}
}

// read notes a successful read of the state that began at began.
func (t *Timeline) read(began time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if began.After(t.readAt) {
		t.readAt = began
		t.notify()
	}
}

// notify wakes Issued's waiters; t.mu is held.
func (t *Timeline) notify() {
	close(t.changed)
	t.changed = make(chan struct{})
}
