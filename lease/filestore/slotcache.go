package filestore

import (
	"sync"
	"sync/atomic"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// slotCache remembers, per shard, which slot holds the current version and what both slots'
// headers announced when this Store last read the shard whole or wrote it, both under the
// shard's lock. A write then checks the two header lines (a read of ~70 bytes each) instead of
// reading and decoding both slots: every write raises the version in the header of the slot it
// writes, and re-creation starts both at a new one, so headers that still match mean that no
// other process has written the shard since. Anything else — another version, a torn or missing
// slot — reads the shard whole, as before.
type slotCache struct {
	mu     sync.Mutex
	shards map[rooms.ShardKey]cachedSlots
	// wholeReads counts the reads of both slots of a shard (readSlots), for tests.
	wholeReads atomic.Uint64
	// headerListings counts the shards that ShardVersions answered from their slots' headers.
	headerListings atomic.Uint64
	// opens counts the slot files opened for a header check or a write, for tests.
	opens atomic.Uint64
}

// cachedSlots is what the headers of a shard's slots announced: slot at holds version cur
// (whole, when it was recorded), the other slot's header announced other.
type cachedSlots struct {
	at         int
	cur, other uint64
}

func (c *slotCache) get(key rooms.ShardKey) (cachedSlots, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.shards[key]
	return e, ok
}

func (c *slotCache) put(key rooms.ShardKey, e cachedSlots) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shards == nil {
		c.shards = map[rooms.ShardKey]cachedSlots{}
	}
	c.shards[key] = e
}

func (c *slotCache) forget(key rooms.ShardKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.shards, key)
}

// forgetAll forgets every shard (their files are gone: dir.go).
func (c *slotCache) forgetAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.shards)
}

// currentLocked returns the shard's current version and the slot holding it, for a caller
// holding the shard's lock: from the cache when both headers still announce what it recorded,
// else from a whole read (readSlotsLocked), which it records. When the cache answers, held is
// the other slot — the one the caller's write goes to — open for writing, its header read
// through the same descriptor; the caller closes it. Otherwise held is nil.
func (s *Store) currentLocked(key rooms.ShardKey) (e cachedSlots, held *heldSlot, err error) {
	if e, ok := s.slots.get(key); ok {
		cur, err := s.headerVersion(s.slotPath(key, e.at))
		if err != nil {
			return cachedSlots{}, nil, err
		}
		path := s.slotPath(key, 1-e.at)
		held, err := s.openSlot(path)
		if err != nil {
			return cachedSlots{}, nil, err
		}
		var other uint64 // a missing slot announces nothing
		if held != nil {
			if other, err = readHeaderVersion(held.f, path); err != nil {
				held.close()
				return cachedSlots{}, nil, err
			}
		}
		if cur == e.cur && other == e.other && held != nil {
			return e, held, nil
		}
		held.close()
		s.slots.forget(key)
	}
	r, err := s.readSlotsLocked(key)
	if err != nil {
		return cachedSlots{}, nil, err
	}
	other, err := s.headerVersion(s.slotPath(key, 1-r.at))
	if err != nil {
		return cachedSlots{}, nil, err
	}
	e = cachedSlots{at: r.at, cur: r.file.Version, other: other}
	s.slots.put(key, e)
	return e, nil, nil
}
