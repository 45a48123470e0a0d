package rooms

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// keyLayout keeps every room under a key of its own beside a small head per shard (a
// RoomStore: etcd). A batch reads its shard's head and its own rooms — never the others — or
// takes what it remembers of them (roomcache.go), and decides on a partial document of them
// (shardDoc.partial). It writes the rooms it changed or removed, each conditional on its
// version, and the head (conditional on its own) only when the floor moves or a room goes: a
// renewal writes one room. An activation also collects up to gcLimit expired rooms of the
// shard, found by the store's expiry index. The store counts the active rooms (roomcount.go).
type keyLayout struct {
	*Manager
	rs RoomStore
	// seen is the filter of rooms found stored (roomcache.go).
	seen    seenRooms
	count   roomCounter
	byShard []keyShard
}

// keyShard is a shard's state in a keyLayout; only the holder of its queue touches it.
type keyShard struct {
	rooms roomCache // what this Manager last read or wrote of the shard's rooms
	// The batch's rooms, whether it campaigns, and what is remembered of them, when it may be
	// decided on that (fromMemory).
	ids        []string
	campaigns  bool
	remembered RoomsRead
	fromMemory bool
	// The attempt's read, its write, and its activations registered with the count.
	got     roomsLoaded
	w       RoomsWrite
	counted int
}

// gcLimit bounds the expired rooms one activating batch collects.
const gcLimit = 16

// maxRoomBatch bounds the operations of one write on a RoomStore: each writes a room and moves
// its index entry, and etcd refuses a transaction of more than 128 operations by default.
const maxRoomBatch = 24

func newKeyLayout(m *Manager, rs RoomStore) *keyLayout {
	if !m.budgetSet {
		m.maxShardBytes = 0 // none: the budget exists for the Swarm store's proposal size
	}
	k := &keyLayout{Manager: m, rs: rs, byShard: make([]keyShard, m.shards)}
	k.count.done.L = &k.count.mu
	return k
}

func (k *keyLayout) load(ctx context.Context, key ShardKey, ids []string) (*shardDoc, error) {
	doc, _, err := k.loadRooms(ctx, key, ids, 0)
	return doc, err
}

func (k *keyLayout) notify(ctx context.Context, key ShardKey, roomID string) (<-chan struct{}, error) {
	return k.rs.NotifyRoom(ctx, key, roomID)
}

func (k *keyLayout) begin(key ShardKey, batch []*op) {
	s := &k.byShard[key.Index]
	s.ids, s.campaigns = make([]string, 0, len(batch)), false
	for _, o := range batch {
		s.campaigns = s.campaigns || o.kind == opCampaign
		if !slices.Contains(s.ids, o.room) {
			s.ids = append(s.ids, o.room)
		}
	}
	// Operations on remembered rooms are decided without a read (roomcache.go). Near the
	// active-room limit campaigns read: a refusal is taken again on a read, and each decision
	// there counts the live rooms anew.
	s.remembered, s.fromMemory = RoomsRead{}, false
	if !s.campaigns || (s.rooms.sweptWithin(k.clock.Monotonic()) && !k.count.near(k.Manager, len(batch))) {
		s.remembered, s.fromMemory = s.rooms.read(s.ids, every(batch, func(o *op) bool { return o.kind == opCampaign }), &k.seen)
	}
}

func (k *keyLayout) read(ctx context.Context, key ShardKey, now time.Time) (doc *shardDoc, err error) {
	s := &k.byShard[key.Index]
	if s.fromMemory {
		doc, s.got, err = k.roomsDoc(key, s.remembered)
		return doc, err
	}
	var expiredBefore int64
	if s.campaigns {
		// A room has ended once now ≥ expires_at + skew (Manager.live).
		expiredBefore = now.Add(-k.skew).UnixMilli() + 1
	}
	doc, s.got, err = k.loadRooms(ctx, key, s.ids, expiredBefore)
	if err == nil && expiredBefore > 0 {
		s.rooms.sweptAt(k.clock.Monotonic())
	}
	return doc, err
}

// decide decides under the Manager's decision lock when the batch may activate a room, against
// the active rooms the store counts, and registers its activations as in flight before it lets
// the lock go. A decision on remembered rooms stands only if every op changed its room — a
// refusal is only ever decided on what the store holds now — and the write checks what the
// decision used: a renewal depends on its room alone, and whatever else uses the head (an
// activation the floor, a removal its bytes) writes it, conditional on the version remembered.
func (k *keyLayout) decide(ctx context.Context, key ShardKey, batch []*op, doc *shardDoc, now time.Time) (bool, error) {
	s := &k.byShard[key.Index]
	changed, err := k.decideCounted(ctx, s, batch, doc, now)
	if err != nil {
		return false, err
	}
	again := s.fromMemory && !every(batch, func(o *op) bool { return o.out.changed })
	if changed && !again {
		touched := make(map[string]bool, len(batch))
		for _, o := range batch {
			touched[o.room] = touched[o.room] || o.out.changed
		}
		s.w = k.roomsWrite(key, doc, s.got, touched)
		again = s.fromMemory && s.w.Head == nil && !every(batch, func(o *op) bool { return o.kind == opRenew })
	}
	switch {
	case again: // its activations, never written, leave the count
		k.count.end(s.counted, false)
		s.fromMemory = false
		return false, errDecideOnRead
	case !changed:
		s.rooms.learn(s.ids, s.got.read, &k.seen) // a read: not from memory here
	}
	return changed, nil
}

// decideCounted decides every op of batch on the partial document, counting the active rooms
// when the batch may activate one (roomCounter).
func (k *keyLayout) decideCounted(ctx context.Context, s *keyShard, batch []*op, doc *shardDoc, now time.Time) (bool, error) {
	s.counted = 0
	if k.maxActive <= 0 || !k.mayActivate(batch, doc, now) {
		changed, _, _ := k.applyAll(batch, doc, now, nil)
		return changed, nil
	}
	k.deciding.Lock()
	defer k.deciding.Unlock()
	c, err := k.count.capacity(ctx, k, now, len(batch))
	if err != nil {
		return false, err
	}
	// The store's count includes the live rooms of the document, which admit adds.
	c.active = max(c.active-doc.Rooms.len(), 0)
	changed, _, won := k.applyAll(batch, doc, now, &c)
	k.count.begin(won)
	s.counted = won
	return changed, nil
}

func (k *keyLayout) write(ctx context.Context, key ShardKey, _ *shardDoc) (bool, error) {
	s := &k.byShard[key.Index]
	v, maybe, err := k.writeRooms(ctx, key, s.w)
	k.count.end(s.counted, maybe || !errors.Is(err, lease.ErrConflict))
	if err == nil {
		s.rooms.remember(s.ids, s.got.read, s.w, v, &k.seen)
		return false, nil
	}
	stale := s.fromMemory
	s.fromMemory = false
	if stale && !maybe && errors.Is(err, lease.ErrConflict) {
		// What the decision remembered was stale (or a guess): nobody is contending with this
		// write, so the read follows at once and is not counted as a retry.
		return false, errDecideOnRead
	}
	return maybe, err
}

func (k *keyLayout) forget(key ShardKey) { k.byShard[key.Index].rooms.forget() }

func (k *keyLayout) end(key ShardKey) {
	s := &k.byShard[key.Index]
	s.ids, s.remembered, s.got, s.w = nil, RoomsRead{}, roomsLoaded{}, RoomsWrite{}
}

// partialBytes is the bytes the shard would account with room id set to *e: the document
// around its rooms at the longest floor, the rooms not in the document, those in it but id,
// and id's new entry.
func (d *shardDoc) partialBytes(id string, e *roomEntry) int {
	around := shardDoc{Schema: d.Schema, Namespace: d.Namespace, Index: d.Index, Shards: d.Shards, Floor: math.MaxUint64}
	n := len(around.encode()) + d.others + RoomBytes(id, CanonicalJSON(*e))
	for _, r := range d.Rooms.slots {
		if r.id != id {
			n += RoomBytes(r.id, CanonicalJSON(r.entry))
		}
	}
	return n
}

// loadRooms reads the head and rooms ids of shard key into a partial document, and, when
// expiredBefore is positive, the shard's rooms expired before it (not in the document). The
// stored rooms it returns are by id.
func (k *keyLayout) loadRooms(ctx context.Context, key ShardKey, ids []string, expiredBefore int64) (*shardDoc, roomsLoaded, error) {
	limit := 0
	if expiredBefore > 0 {
		limit = gcLimit
	}
	read, err := k.rs.LoadRooms(ctx, key, ids, expiredBefore, limit)
	if err != nil {
		return nil, roomsLoaded{}, err
	}
	return k.roomsDoc(key, read)
}

// roomsDoc is the partial document of what LoadRooms read (or what a shard queue remembers of
// it, roomcache.go).
func (k *keyLayout) roomsDoc(key ShardKey, read RoomsRead) (*shardDoc, roomsLoaded, error) {
	doc := newShard(key, k.shards, k.clock.Now())
	doc.partial = true
	got := roomsLoaded{read: read, stored: make(map[string]StoredRoom, len(read.Rooms))}
	if read.Head != nil {
		var h ShardHead
		if err := json.Unmarshal(read.Head, &h); err != nil {
			return nil, got, k.placed(&lease.CorruptError{Reason: fmt.Sprintf("not a rooms shard head (%v); repair it or remove the namespace's shards", err)}, key.Index)
		}
		doc.Schema, doc.Namespace, doc.Index, doc.Shards, doc.Floor = h.Schema, h.Namespace, h.Index, h.Shards, h.Floor
		if err := checkShardHeader(doc, key, k.shards); err != nil {
			return nil, got, k.placed(err, key.Index)
		}
		got.head, doc.others = h, h.Bytes
	}
	for _, r := range read.Rooms {
		var e roomEntry
		if err := json.Unmarshal(r.Data, &e); err != nil {
			return nil, got, k.placed(&lease.CorruptError{Field: "room " + r.ID, Value: truncate(string(r.Data)), Reason: "not a room entry"}, key.Index)
		}
		if err := checkRoom(r.ID, e, key, k.shards, doc.Floor); err != nil {
			return nil, got, k.placed(err, key.Index)
		}
		doc.Rooms.set(r.ID, e)
		got.stored[r.ID] = r
		doc.others -= r.Size
	}
	for _, r := range read.Expired {
		if _, ok := got.stored[r.ID]; !ok {
			doc.others -= r.Size // collected by the write, when it writes the head
		}
	}
	doc.others = max(doc.others, 0)
	return doc, got, nil
}

// roomsLoaded is what loadRooms read, beside the document.
type roomsLoaded struct {
	read   RoomsRead
	head   ShardHead
	stored map[string]StoredRoom
}

// roomsWrite is the write that turns the stored rooms of got into those of doc. The head is
// written when the floor moved or a room goes (and then the expired rooms found are collected
// with it), so that the shard's version moves with every removal.
// A room an operation changed is written even when its bytes stay the same (a renewal within
// the same millisecond): every renewal is a write, as on the other stores.
func (k *keyLayout) roomsWrite(key ShardKey, doc *shardDoc, got roomsLoaded, touched map[string]bool) RoomsWrite {
	var w RoomsWrite
	bytesNow := doc.others
	for _, r := range doc.Rooms.slots {
		data := CanonicalJSON(r.entry)
		size := RoomBytes(r.id, data)
		bytesNow += size
		old, stored := got.stored[r.id]
		if stored && !touched[r.id] && bytes.Equal(old.Data, data) {
			continue
		}
		w.Put = append(w.Put, StoredRoom{ID: r.id, Data: data, ExpiresMs: r.entry.ExpiresMs, Size: size,
			Version: old.Version, PrevExpiresMs: old.ExpiresMs})
	}
	for id, old := range got.stored {
		if _, ok := doc.Rooms.get(id); !ok {
			w.Delete = append(w.Delete, StoredRoom{ID: id, ExpiresMs: old.ExpiresMs, Size: old.Size, Version: old.Version})
		}
	}
	if got.read.Head == nil || doc.Floor != got.head.Floor || len(w.Delete) > 0 {
		for _, r := range got.read.Expired {
			if _, ok := got.stored[r.ID]; !ok {
				w.Delete = append(w.Delete, StoredRoom{ID: r.ID, ExpiresMs: r.ExpiresMs, Size: r.Size})
			}
		}
		h := ShardHead{Schema: shardSchema, Namespace: key.Namespace, Index: key.Index, Shards: k.shards, Floor: doc.Floor, Bytes: bytesNow}
		w.Head, _ = json.Marshal(h)
		w.HeadVersion = got.read.HeadVersion
	}
	return w
}

// writeRooms applies w. Its outcome is settled: an unknown one is read back, and the write
// landed if it shows exactly what w wrote (at a version not known).
func (k *keyLayout) writeRooms(ctx context.Context, key ShardKey, w RoomsWrite) (lease.Version, bool, error) {
	v, err := k.rs.WriteRooms(ctx, key, w)
	return settle(ctx, v, err, func(ctx context.Context) (bool, lease.Version, error) {
		var ids []string
		for _, r := range slices.Concat(w.Put, w.Delete) {
			ids = append(ids, r.ID)
		}
		read, err := k.rs.LoadRooms(ctx, key, ids, 0, 0)
		return err == nil && landed(w, read), 0, err
	})
}

// landed reports whether read shows exactly what w wrote: its rooms, none of its deleted rooms,
// and its head.
func landed(w RoomsWrite, read RoomsRead) bool {
	if w.Head != nil && !bytes.Equal(w.Head, read.Head) {
		return false
	}
	stored := make(map[string][]byte, len(read.Rooms))
	for _, r := range read.Rooms {
		stored[r.ID] = r.Data
	}
	for _, r := range w.Put {
		if data, ok := stored[r.ID]; !ok || !bytes.Equal(data, r.Data) {
			return false
		}
	}
	for _, r := range w.Delete {
		if _, ok := stored[r.ID]; ok {
			return false
		}
	}
	return true
}
