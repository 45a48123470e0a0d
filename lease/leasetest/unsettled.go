package leasetest

import (
	"context"
	"sync"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// Landing is when a write that UnsettledStore reports as ambiguous really lands.
type Landing int

const (
	// LandsAtOnce: before the store answers, so the writer's read-back could see it.
	LandsAtOnce Landing = iota
	// LandsLate: after the writer's read-back, at its next read — like a Swarm write that
	// commits through a new Raft leader while the manager that took it is cut off.
	LandsLate
	// NeverLands: the write was lost.
	NeverLands
)

// UnsettledStore wraps a real store and makes one chosen write (Create or Update) report
// lease.ErrAmbiguous: a test double for the engine's handling of writes whose outcome is
// unknown. Arm it with Arm; the write then lands as Landing says, and After (if set) runs right
// after it landed — another contender acting before the writer reads it back. It counts the
// writes that landed.
type UnsettledStore struct {
	lease.Store

	mu            sync.Mutex
	armed         bool
	when          Landing
	after         func()
	late          func() // LandsLate: the write, applied at the second load after it
	loads         int
	landed        int
	conflictAfter bool
}

// Arm makes the next write report ErrAmbiguous and land as when says; after, if not nil, runs
// once it has landed. With conflictAfter, every later write fails with lease.ErrConflict.
func (s *UnsettledStore) Arm(when Landing, after func(), conflictAfter bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed, s.when, s.after, s.conflictAfter = true, when, after, conflictAfter
}

// Landed is the number of writes that landed.
func (s *UnsettledStore) Landed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.landed
}

// Load implements lease.Store; the second load after an ambiguous LandsLate write (the first is
// the writer's read-back) applies that write first.
func (s *UnsettledStore) Load(ctx context.Context, ns string) (lease.Record, lease.Version, error) {
	s.mu.Lock()
	s.loads++
	var late func()
	if s.late != nil && s.loads == 2 {
		late, s.late = s.late, nil
	}
	s.mu.Unlock()
	if late != nil {
		late()
	}
	return s.Store.Load(ctx, ns)
}

// Create implements lease.Store.
func (s *UnsettledStore) Create(ctx context.Context, rec lease.Record) (lease.Version, error) {
	return s.write(func() (lease.Version, error) { return s.Store.Create(ctx, rec) })
}

// Update implements lease.Store.
func (s *UnsettledStore) Update(ctx context.Context, rec lease.Record, v lease.Version) (lease.Version, error) {
	return s.write(func() (lease.Version, error) { return s.Store.Update(ctx, rec, v) })
}

func (s *UnsettledStore) write(do func() (lease.Version, error)) (lease.Version, error) {
	s.mu.Lock()
	armed, when, after, conflict := s.armed, s.when, s.after, s.conflictAfter
	s.armed = false
	if armed {
		s.loads = 0
	}
	s.mu.Unlock()
	land := func() {
		if _, err := do(); err == nil {
			s.mu.Lock()
			s.landed++
			s.mu.Unlock()
			if after != nil {
				after()
			}
		}
	}
	switch {
	case !armed && conflict:
		return 0, lease.ErrConflict
	case !armed:
		ver, err := do()
		if err == nil {
			s.mu.Lock()
			s.landed++
			s.mu.Unlock()
		}
		return ver, err
	}
	switch when {
	case LandsAtOnce:
		land()
	case LandsLate:
		s.mu.Lock()
		s.late = land
		s.mu.Unlock()
	case NeverLands:
	}
	return 0, lease.ErrAmbiguous
}
