package memstore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

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
	regs := slices.Collect(maps.Values(s.successors[namespace]))
	slices.SortFunc(regs, func(a, b registration) int { return cmp.Compare(a.seq, b.seq) }) // the longest registered first
	out := make([]lease.Successor, len(regs))
	for i, r := range regs {
		out[i] = r.s
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
