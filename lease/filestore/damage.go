package filestore

import (
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

var _ rooms.DamageReporter = (*Store)(nil)

// damageLog is the slots that a Store found damaged and has reported, and who listens. Besides
// damaged slots, a Store reports its directory found missing and recreated (dir.go).
type damageLog struct {
	mu sync.Mutex
	// reported maps a slot path to the reason it was reported for, until a write replaces the
	// slot: a damaged slot that is read again and again is reported once.
	reported map[string]string
	handlers []func(rooms.Damage)
}

// OnDamage implements rooms.DamageReporter: fn is called, from the operation that found it,
// for every damaged rooms slot found from now on. A slot is reported again only after a write
// replaced it and it is found damaged anew.
func (s *Store) OnDamage(fn func(rooms.Damage)) {
	s.damage.mu.Lock()
	defer s.damage.mu.Unlock()
	s.damage.handlers = append(s.damage.handlers, fn)
}

// report tells the handlers about d, unless it was reported already.
func (s *Store) report(d rooms.Damage) {
	x := &s.damage
	x.mu.Lock()
	if x.reported[d.Where] == d.Reason {
		x.mu.Unlock()
		return
	}
	if x.reported == nil {
		x.reported = map[string]string{}
	}
	x.reported[d.Where] = d.Reason
	x.mu.Unlock()
	s.notify(d)
}

// notify tells the handlers about d, every time: for damage found by an event (a recreated
// directory), not by reading a slot that may be read again and again.
func (s *Store) notify(d rooms.Damage) {
	x := &s.damage
	x.mu.Lock()
	handlers := append([]func(rooms.Damage){}, x.handlers...)
	x.mu.Unlock()
	if d.At.IsZero() {
		d.At = time.Now().UTC()
	}
	for _, fn := range handlers {
		fn(d)
	}
}

// reportedAlready reports whether d was reported and its slot not written since.
func (s *Store) reportedAlready(d rooms.Damage) bool {
	x := &s.damage
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.reported[d.Where] == d.Reason
}

// healed forgets the report of the slot at path: a write replaced it.
func (s *Store) healed(path string) {
	x := &s.damage
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.reported, path)
}
