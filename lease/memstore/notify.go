package memstore

import (
	"context"

	"github.com/regbo/lfp-swarm-lease/lease"
)

var _ lease.Notifier = (*Store)(nil)

// Notify implements lease.Notifier: every write to namespace notifies.
func (s *Store) Notify(ctx context.Context, namespace string) (<-chan struct{}, error) {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	if s.watchers == nil {
		s.watchers = map[string]map[chan struct{}]struct{}{}
	}
	if s.watchers[namespace] == nil {
		s.watchers[namespace] = map[chan struct{}]struct{}{}
	}
	s.watchers[namespace][ch] = struct{}{}
	s.mu.Unlock()
	go func() {
		<-ctx.Done()
		s.mu.Lock()
		delete(s.watchers[namespace], ch)
		s.mu.Unlock()
		close(ch)
	}()
	return ch, nil
}

// notifyLocked wakes the watchers of namespace; s.mu must be held.
func (s *Store) notifyLocked(namespace string) {
	for ch := range s.watchers[namespace] {
		lease.Signal(ch)
	}
}
