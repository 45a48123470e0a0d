package rooms

import (
	"sync/atomic"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// On a RoomStore an operation on rooms that this Manager read or wrote last — or a campaign in
// a room it never found stored (seenRooms), taken as not stored — is decided on what it
// remembers of them and of their shard's head, without reading them again: the write that
// follows is conditional on every room's version (0: still not stored) and, whenever the
// decision used the head (an activation moves its floor, a removal its bytes), on the head's,
// so that it lands only if all are still what the decision saw — the decision is then as good
// as one on a read at the write's revision. A decision that writes nothing (a refusal, a
// follower's answer) proves nothing and is taken again on a read; so is every decision after a
// conflict or an unknown outcome. A campaign reads anyway near the active-room limit, and when
// the shard's expired rooms have not been looked for within sweepEvery: the read that finds
// them is how they are collected (docs/rooms.md §2).

// sweepEvery is how often, at most, a shard's campaigns skip the read that finds its expired
// rooms; every campaign after it reads.
const sweepEvery = time.Second

// maxCachedRooms bounds the rooms remembered by every Manager of the process together, so that
// memory stays flat in the number of rooms; beyond it, rooms are read as if not remembered.
const maxCachedRooms = 1 << 15

// cachedRooms counts the rooms remembered by the process's Managers.
var cachedRooms atomic.Int64

// seenRooms is a Manager's Bloom filter of the rooms it has found stored, long after it stopped
// remembering them: a campaign guesses a room not stored only if the filter has never seen it,
// so that a campaign among the followers of a room the server forgot reads, as before, instead
// of paying a write whose condition fails. A false positive only costs that read. 2 MiB: about
// 0.2 % false positives at a million rooms, 7 % at three million.
type seenRooms struct {
	bits [seenWords]atomic.Uint64
}

const (
	seenWords  = 1 << 18 // 2^24 bits
	seenHashes = 4
)

// positions are the filter's bits of room id: double hashing of FNV-1a 64, mixed (splitmix64's
// finalizer) so that they do not follow the shard index, which is the same hash's remainder.
func (f *seenRooms) positions(id string, each func(word int, bit uint64)) {
	h := fnv1a64(id)
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	h1, h2 := h, h>>32|1
	for i := range uint64(seenHashes) {
		p := (h1 + i*h2) % (seenWords * 64)
		each(int(p/64), 1<<(p%64))
	}
}

func (f *seenRooms) add(id string) {
	f.positions(id, func(word int, bit uint64) {
		if f.bits[word].Load()&bit == 0 {
			f.bits[word].Or(bit)
		}
	})
}

func (f *seenRooms) has(id string) bool {
	all := true
	f.positions(id, func(word int, bit uint64) { all = all && f.bits[word].Load()&bit != 0 })
	return all
}

// roomCache is what a shard queue remembers of its shard on a RoomStore: the head and the rooms
// as last read or written, each at its version. Only the queue's sem holder touches it.
type roomCache struct {
	valid       bool // the head is known
	head        []byte
	headVersion lease.Version
	// rooms are the rooms remembered, by id; Version 0: known not to be stored.
	rooms map[string]StoredRoom
	// swept is the Clock.Monotonic of the last read that looked for the shard's expired rooms,
	// when sweptValid.
	swept      time.Duration
	sweptValid bool
}

// read returns what a LoadRooms of ids without expired rooms would, when the head and every
// one of ids are remembered — or, with guessAbsent, when the head is and the rooms not
// remembered were never found stored (seen): those are then taken as not stored, a guess that
// the write's condition on each (version 0) checks. A batch of campaigns guesses: a room nobody
// ever campaigned in is created without a read, and one that another server created costs one
// write whose condition fails, then the read, once per server.
func (c *roomCache) read(ids []string, guessAbsent bool, seen *seenRooms) (RoomsRead, bool) {
	if !c.valid || c.head == nil {
		return RoomsRead{}, false
	}
	out := RoomsRead{Head: c.head, HeadVersion: c.headVersion, Rooms: make([]StoredRoom, 0, len(ids))}
	for _, id := range ids {
		r, ok := c.rooms[id]
		if !ok && guessAbsent && !seen.has(id) {
			continue
		}
		if !ok {
			return RoomsRead{}, false
		}
		if r.Version != 0 {
			out.Rooms = append(out.Rooms, r)
		}
	}
	return out, true
}

// remember records what the store holds after write w, applied at version v on top of read, a
// read of rooms ids (those not in it are not stored).
func (c *roomCache) remember(ids []string, read RoomsRead, w RoomsWrite, v lease.Version, seen *seenRooms) {
	if v == 0 {
		for _, r := range w.Put {
			seen.add(r.ID)
		}
		c.forget()
		return
	}
	c.learn(ids, read, seen)
	if w.Head != nil {
		c.head, c.headVersion = w.Head, v
	}
	for _, r := range w.Put {
		r.Version, r.PrevExpiresMs = v, 0
		c.put(r)
		seen.add(r.ID)
	}
	for _, r := range w.Delete {
		if _, ok := c.rooms[r.ID]; ok {
			c.rooms[r.ID] = StoredRoom{ID: r.ID}
		}
	}
}

// learn records read, a read of rooms ids (those not in it are not stored), and the rooms it
// found in seen.
func (c *roomCache) learn(ids []string, read RoomsRead, seen *seenRooms) {
	c.valid, c.head, c.headVersion = true, read.Head, read.HeadVersion
	if c.rooms == nil {
		c.rooms = map[string]StoredRoom{}
	}
	for _, id := range ids {
		c.put(StoredRoom{ID: id}) // not stored, unless read
	}
	for _, r := range read.Rooms {
		c.put(r)
		seen.add(r.ID)
	}
}

// put remembers r. At the process's bound a new room takes the place of another room of this
// shard (any: the ones not used again are as likely to go as the others), or is not remembered.
func (c *roomCache) put(r StoredRoom) {
	if _, ok := c.rooms[r.ID]; !ok {
		if cachedRooms.Load() >= maxCachedRooms {
			if len(c.rooms) == 0 {
				return
			}
			for id := range c.rooms {
				delete(c.rooms, id)
				break
			}
		} else {
			cachedRooms.Add(1)
		}
	}
	c.rooms[r.ID] = r
}

// forget empties the cache: the next decision reads.
func (c *roomCache) forget() {
	cachedRooms.Add(-int64(len(c.rooms)))
	*c = roomCache{}
}

// sweptAt records a read that looked for the shard's expired rooms at Clock.Monotonic now.
func (c *roomCache) sweptAt(now time.Duration) { c.swept, c.sweptValid = now, true }

// sweptWithin reports whether the shard's expired rooms were looked for within sweepEvery of
// now.
func (c *roomCache) sweptWithin(now time.Duration) bool {
	return c.sweptValid && now-c.swept < sweepEvery
}
