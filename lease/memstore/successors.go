package memstore

import (
	"context"
	"fmt"

	"github.com/regbo/lfp-swarm-lease/lease"
)

var _ lease.SuccessorRegistry = (*Store)(nil)

// registration is one successor registration, in the order they were made.
type registration struct {
	s   lease.Successor
	seq uint64
}

// RegisterSuccessor implements lease.SuccessorRegistry: s stays registered until ctx ends (a
// process's registrations die with it).
func (s *Store) RegisterSuccessor(ctx context.Context, namespace string, su lease.Successor) error {
	s.mu.Lock()
	if s.successors == nil {
		s.successors = map[string]map[string]registration{}
	}
	if s.successors[namespace] == nil {
		s.successors[namespace] = map[string]registration{}
	}
	s.seq++
	s.successors[namespace][su.Token] = registration{s: su, seq: s.seq}
	s.mu.Unlock()
	<-ctx.Done()
	s.mu.Lock()
	delete(s.successors[namespace], su.Token)
	s.mu.Unlock()
	return nil
}

// Successors implements lease.SuccessorRegistry.
func (s *Store) Successors(_ context.Context, namespace string) ([]lease.Successor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	regs := make([]registration, 0, len(s.successors[namespace]))
	for _, r := range s.successors[namespace] {
		regs = append(regs, r)
	}
	out := make([]lease.Successor, 0, len(regs))
	for len(regs) > 0 { // the longest registered first
		first := 0
		for i, r := range regs {
			if r.seq < regs[first].seq {
				first = i
			}
		}
		out = append(out, regs[first].s)
		regs = append(regs[:first], regs[first+1:]...)
	}
	return out, nil
}

// HandOver implements lease.SuccessorRegistry.
func (s *Store) HandOver(_ context.Context, rec lease.Record, expected lease.Version, to lease.Successor) (lease.Version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.records[rec.Namespace]
	if !ok {
		return 0, fmt.Errorf("memory store: %q: %w", rec.Namespace, lease.ErrNotFound)
	}
	if rec.Handover.To != to.Token {
		return 0, fmt.Errorf("memory store: hand over %q: the record does not name the successor's registration", rec.Namespace)
	}
	if e.ver != expected {
		return 0, fmt.Errorf("memory store: %q: version %d, expected %d: %w", rec.Namespace, e.ver, expected, lease.ErrConflict)
	}
	if _, registered := s.successors[rec.Namespace][to.Token]; !registered {
		return 0, fmt.Errorf("memory store: %q: %w", rec.Namespace, lease.ErrSuccessorGone)
	}
	return s.put(rec), nil
}
