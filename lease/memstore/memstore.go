// Package memstore is an in-process lease store, for tests and single-process demos. Its state
// dies with the process.
package memstore

import (
	"context"
	"fmt"
	"sync"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// Store keeps records in memory. The zero value is not usable; call New.
type Store struct {
	mu      sync.Mutex
	records map[string]entry
	// next is shared by all namespaces so that a record deleted and created again never
	// repeats a version.
	next lease.Version
	// watchers are the Notify channels per namespace.
	watchers map[string]map[chan struct{}]struct{}
	// successors are the successor registrations per namespace, by token; seq orders them.
	successors map[string]map[string]registration
	seq        uint64
}

type entry struct {
	rec lease.Record
	ver lease.Version
}

var _ lease.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store { return &Store{records: map[string]entry{}} }

// Load implements lease.Store.
func (s *Store) Load(_ context.Context, namespace string) (lease.Record, lease.Version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.records[namespace]
	if !ok {
		return lease.Record{}, 0, fmt.Errorf("memory store: %q: %w", namespace, lease.ErrNotFound)
	}
	return e.rec, e.ver, nil
}

// Create implements lease.Store.
func (s *Store) Create(_ context.Context, rec lease.Record) (lease.Version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.records[rec.Namespace]; ok {
		return 0, fmt.Errorf("memory store: %q: %w", rec.Namespace, lease.ErrExists)
	}
	return s.put(rec), nil
}

// Update implements lease.Store.
func (s *Store) Update(_ context.Context, rec lease.Record, expected lease.Version) (lease.Version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.records[rec.Namespace]
	if !ok {
		return 0, fmt.Errorf("memory store: %q: %w", rec.Namespace, lease.ErrNotFound)
	}
	if e.ver != expected {
		return 0, fmt.Errorf("memory store: %q: version %d, expected %d: %w", rec.Namespace, e.ver, expected, lease.ErrConflict)
	}
	return s.put(rec), nil
}

// Delete implements lease.Store.
func (s *Store) Delete(_ context.Context, namespace string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.records, namespace)
	s.notifyLocked(namespace)
	return nil
}

// Describe implements lease.Store.
func (s *Store) Describe() string { return "memory store" }

func (s *Store) put(rec lease.Record) lease.Version {
	s.next++
	s.records[rec.Namespace] = entry{rec: rec, ver: s.next}
	s.notifyLocked(rec.Namespace)
	return s.next
}
