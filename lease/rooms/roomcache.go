package rooms

import (
	"sync/atomic"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// On a RoomStore a renewal or a resignation of a room that this Manager read or wrote last is
// decided on what it remembers of the room and its shard's head, without reading them again:
// the write that follows is conditional on the room's version and on the head's, so that it
// lands only if both are still what the decision saw — the decision is then as good as one on
// a read at the write's revision. A decision that writes nothing (a refusal) proves nothing
// and is taken again on a read; so is every decision after a conflict or an unknown outcome.
// Campaigns always read: an activation also collects expired rooms from the store's index and
// is counted against the active-room limit (docs/rooms.md §2).

// maxCachedRooms bounds the rooms remembered by every Manager of the process together, so that
// memory stays flat in the number of rooms; beyond it, rooms are read as if not remembered.
const maxCachedRooms = 1 << 15

// cachedRooms counts the rooms remembered by the process's Managers.
var cachedRooms atomic.Int64

// roomCache is what a shard queue remembers of its shard on a RoomStore: the head and the rooms
// as last read or written, each at its version. Only the queue's sem holder touches it.
type roomCache struct {
	valid       bool // the head is known
	head        []byte
	headVersion lease.Version
	rooms       map[string]StoredRoom
}

// read returns what a LoadRooms of ids without expired rooms would, when the head and every
// one of ids are remembered.
func (c *roomCache) read(ids []string) (RoomsRead, bool) {
	if !c.valid || c.head == nil {
		return RoomsRead{}, false
	}
	out := RoomsRead{Head: c.head, HeadVersion: c.headVersion, Rooms: make([]StoredRoom, 0, len(ids))}
	for _, id := range ids {
		r, ok := c.rooms[id]
		if !ok {
			return RoomsRead{}, false
		}
		out.Rooms = append(out.Rooms, r)
	}
	return out, true
}

// remember records what the store holds after write w, applied at version v on top of read.
func (c *roomCache) remember(read RoomsRead, w RoomsWrite, v lease.Version) {
	if v == 0 {
		c.forget()
		return
	}
	c.valid, c.head, c.headVersion = true, read.Head, read.HeadVersion
	if w.Head != nil {
		c.head, c.headVersion = w.Head, v
	}
	if c.rooms == nil {
		c.rooms = map[string]StoredRoom{}
	}
	for _, r := range read.Rooms {
		c.put(r)
	}
	for _, r := range w.Put {
		r.Version, r.PrevExpiresMs = v, 0
		c.put(r)
	}
	for _, r := range w.Delete {
		c.drop(r.ID)
	}
}

func (c *roomCache) put(r StoredRoom) {
	if _, ok := c.rooms[r.ID]; !ok {
		if cachedRooms.Load() >= maxCachedRooms {
			return
		}
		cachedRooms.Add(1)
	}
	c.rooms[r.ID] = r
}

func (c *roomCache) drop(id string) {
	if _, ok := c.rooms[id]; ok {
		delete(c.rooms, id)
		cachedRooms.Add(-1)
	}
}

// forget empties the cache: the next decision reads.
func (c *roomCache) forget() {
	cachedRooms.Add(-int64(len(c.rooms)))
	*c = roomCache{}
}
