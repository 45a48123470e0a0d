package rooms

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// On a RoomStore a batch reads the head of its shard and its own rooms — never the others — and
// decides on a partial document that holds only them (shardDoc.partial), with the same rules
// (apply) as on a whole shard. Its write puts the rooms it changed and deletes the ones it
// removed, conditional on each room's version, and writes the head (conditional on its version)
// only when the floor moves or a room goes: a renewal writes one room. An activation also
// collects up to gcLimit expired rooms of the shard, found by the store's expiry index, so that
// rooms nobody campaigns in again do not stay stored for ever.

// gcLimit bounds the expired rooms one activating batch collects.
const gcLimit = 16

// roomHead is a shard's head on a RoomStore: the shard document without its rooms, and the
// bytes its rooms account for (RoomBytes), for the byte budget.
type roomHead struct {
	Schema    int    `json:"schema"`
	Namespace string `json:"ns"`
	Index     int    `json:"shard"`
	Shards    int    `json:"shards"`
	Floor     uint64 `json:"floor"`
	Bytes     int    `json:"bytes"`
}

// encodeEntry returns a room's entry as the shard document holds it (encoding/json's canonical
// form, HTML escaping off, as encode writes it).
func encodeEntry(e roomEntry) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		panic("rooms: encode room: " + err.Error()) // only strings and numbers: cannot fail
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// docOverhead is the bytes of a shard document of namespace ns around its rooms, at the
// longest floor.
func docOverhead(key ShardKey, shards int) int {
	d := newShard(key, shards, time.Time{})
	d.Floor = math.MaxUint64
	return len(d.encode())
}

// partialBytes is the bytes the shard would account with room id set to *e: the rooms not in
// the document, those in it but id, and id's new entry.
func (d *shardDoc) partialBytes(id string, e *roomEntry) int {
	n := d.overhead + d.others + RoomBytes(id, encodeEntry(*e))
	for _, r := range d.Rooms.slots {
		if r.id != id {
			n += RoomBytes(r.id, encodeEntry(r.entry))
		}
	}
	return n
}

// loadRooms reads the head and rooms ids of shard key into a partial document, and, when
// expiredBefore is positive, the shard's rooms expired before it (not in the document). The
// stored rooms it returns are by id.
func (m *Manager) loadRooms(ctx context.Context, key ShardKey, ids []string, expiredBefore int64) (*shardDoc, roomsLoaded, error) {
	limit := 0
	if expiredBefore > 0 {
		limit = gcLimit
	}
	read, err := m.rs.LoadRooms(ctx, key, ids, expiredBefore, limit)
	if err != nil {
		return nil, roomsLoaded{}, err
	}
	return m.roomsDoc(key, read)
}

// roomsDoc is the partial document of what LoadRooms read (or what a shard queue remembers of
// it, roomcache.go).
func (m *Manager) roomsDoc(key ShardKey, read RoomsRead) (*shardDoc, roomsLoaded, error) {
	doc := newShard(key, m.shards, m.clock.Now())
	doc.partial, doc.overhead = true, docOverhead(key, m.shards)
	got := roomsLoaded{read: read, stored: make(map[string]StoredRoom, len(read.Rooms))}
	if read.Head != nil {
		var h roomHead
		if err := json.Unmarshal(read.Head, &h); err != nil {
			return nil, got, m.placed(&lease.CorruptError{Reason: fmt.Sprintf("not a rooms shard head (%v); repair it or remove the namespace's shards", err)}, key.Index)
		}
		doc.Schema, doc.Namespace, doc.Index, doc.Shards, doc.Floor = h.Schema, h.Namespace, h.Index, h.Shards, h.Floor
		if err := checkShardHeader(doc, key, m.shards); err != nil {
			return nil, got, m.placed(err, key.Index)
		}
		got.head, doc.others = h, h.Bytes
	}
	for _, r := range read.Rooms {
		var e roomEntry
		if err := json.Unmarshal(r.Data, &e); err != nil {
			return nil, got, m.placed(&lease.CorruptError{Field: "room " + r.ID, Value: truncate(string(r.Data)), Reason: "not a room entry"}, key.Index)
		}
		if err := checkEntry(r.ID, e, key, m.shards, doc.Floor); err != nil {
			return nil, got, m.placed(err, key.Index)
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
	head   roomHead
	stored map[string]StoredRoom
}

// checkEntry applies decodeShard's checks to one room of a RoomStore.
func checkEntry(id string, e roomEntry, key ShardKey, shards int, floor uint64) error {
	corrupt := func(value, reason string) error {
		return &lease.CorruptError{Field: "room " + id, Value: value, Reason: reason}
	}
	switch {
	case ValidateRoomID(id) != nil || shardIndex(id, shards) != key.Index:
		return corrupt(id, "not a room id of this shard")
	case ValidateCandidateID(e.Candidate) != nil:
		return corrupt(e.Candidate, "invalid candidate id")
	case ValidateMetadata(e.Metadata) != nil:
		return corrupt(truncate(e.Metadata), "invalid metadata")
	case e.Term == 0 || e.Term > floor:
		return corrupt(fmt.Sprint(e.Term), fmt.Sprintf("the term must be positive and at most the shard's floor %d", floor))
	case ValidateTTL(time.Duration(e.TTLSec)*time.Second) != nil:
		return corrupt(fmt.Sprint(e.TTLSec), "the ttl must be 5 to 300 seconds")
	}
	return nil
}

// maxRoomBatch bounds the operations of one write on a RoomStore: each writes a room and moves
// its index entry, and etcd refuses a transaction of more than 128 operations by default.
const maxRoomBatch = 24

// flushRooms is flush on a RoomStore: read the batch's rooms, decide, write what changed,
// retry on conflicts. A long batch is written in parts of maxRoomBatch operations.
func (m *Manager) flushRooms(q *shardQueue, batch []*op) {
	for len(batch) > maxRoomBatch {
		m.flushRooms(q, batch[:maxRoomBatch])
		batch = batch[maxRoomBatch:]
	}
	ctx := m.batches.get()
	fail := func(err error) {
		for _, o := range batch {
			o.err = o.qualify(err)
			o.answer()
		}
	}
	ids := make([]string, 0, len(batch))
	campaigns := false
	for _, o := range batch {
		campaigns = campaigns || o.kind == opCampaign
		if !containsString(ids, o.room) {
			ids = append(ids, o.room)
		}
	}
	// Operations on remembered rooms are decided without a read (roomcache.go).
	remembered, fromMemory := RoomsRead{}, false
	// Near the active-room limit campaigns read: a refusal is taken again on a read, and each
	// decision there counts the live rooms anew.
	if !campaigns || (q.rooms.sweptWithin(m.clock.Monotonic()) && !m.count.near(m, len(batch))) {
		remembered, fromMemory = q.rooms.read(ids, onlyCampaigns(batch), m.seen)
	}
	for conflicts := 0; ; {
		now := m.now()
		var expiredBefore int64
		if campaigns && !fromMemory {
			// A room has ended once now ≥ expires_at + skew (Manager.live).
			expiredBefore = now.Add(-m.skew).UnixMilli() + 1
		}
		var doc *shardDoc
		var got roomsLoaded
		var err error
		if fromMemory {
			doc, got, err = m.roomsDoc(q.key, remembered)
		} else {
			doc, got, err = m.loadRooms(ctx, q.key, ids, expiredBefore)
			if err == nil && expiredBefore > 0 {
				q.rooms.sweptAt(m.clock.Monotonic())
			}
		}
		if err != nil {
			q.rooms.forget()
			fail(err)
			return
		}
		m.collect(doc, now)
		changed, counted, err := m.decideRooms(ctx, batch, doc, got, now)
		if err != nil {
			q.rooms.forget()
			fail(err)
			return
		}
		if fromMemory && !allChanged(batch) {
			// A refusal is only ever decided on what the store holds now.
			m.count.abandon(counted)
			fromMemory = false
			continue
		}
		if !changed {
			q.rooms.learn(ids, got.read, m.seen) // a read: fromMemory is false here
			deliver(batch)
			return
		}
		touched := make(map[string]bool, len(batch))
		for _, o := range batch {
			touched[o.room] = touched[o.room] || o.out.changed
		}
		w := m.roomsWrite(q.key, doc, got, touched)
		if fromMemory && w.Head == nil && !onlyRenewals(batch) {
			// A renewal depends on its room alone. Whatever else uses the head — an activation
			// (the floor), a removal — writes it, conditional on the version remembered; a
			// decision from memory that would leave it unchecked is taken again on a read.
			m.count.abandon(counted)
			fromMemory = false
			continue
		}
		v, maybe, err := m.writeRooms(ctx, q.key, w)
		if errors.Is(err, lease.ErrConflict) && !maybe {
			m.count.abandon(counted) // certainly not written: a condition failed
		} else {
			m.count.finish(counted)
		}
		if err == nil {
			q.rooms.remember(ids, got.read, w, v, m.seen)
			deliver(batch)
			return
		}
		q.rooms.forget()
		stale := fromMemory
		fromMemory = false
		if !errors.Is(err, lease.ErrConflict) {
			fail(err)
			return
		}
		if stale && !maybe {
			// What the decision remembered was stale (or a guess): nobody is contending with
			// this write, so the read follows at once and is not counted as a retry.
			continue
		}
		if maybe {
			for _, o := range batch {
				switch {
				case !o.out.changed:
				case o.kind == opResign:
					o.resigned = o.out.prev
				default:
					o.unsettled = err
				}
			}
		}
		if conflicts++; conflicts > m.maxCASRetries {
			fail(fmt.Errorf("%w (%d attempts)", ErrTooManyConflicts, conflicts))
			return
		}
		if err := pause(ctx, conflicts); err != nil {
			fail(err)
			return
		}
	}
}

// decideRooms decides every op of batch on the partial document. An activating batch decides
// under the Manager's decision lock, against the active rooms the store counts (roomcount.go),
// and registers its activations as in flight before it lets the lock go; counted is how many,
// for roomCounter.finish.
func (m *Manager) decideRooms(ctx context.Context, batch []*op, doc *shardDoc, _ roomsLoaded, now time.Time) (changed bool, counted int, err error) {
	var caps *capacity
	if m.maxActive > 0 && m.mayActivate(batch, doc, now) {
		m.decide.Lock()
		defer m.decide.Unlock()
		c, err := m.count.capacity(ctx, m, now, len(batch))
		if err != nil {
			return false, 0, err
		}
		// The store's count includes the live rooms of the document, which admit adds.
		c.active = max(c.active-doc.Rooms.len(), 0)
		caps = &c
	}
	activations := 0
	for _, o := range batch {
		m.apply(o, doc, now, caps)
		changed = changed || o.out.changed
		if o.kind == opCampaign && o.out.changed {
			activations++
		}
	}
	if caps == nil {
		return changed, 0, nil
	}
	m.count.begin(activations)
	return changed, activations, nil
}

// roomsWrite is the write that turns the stored rooms of got into those of doc. The head is
// written when the floor moved or a room goes (and then the expired rooms found are collected
// with it), so that the shard's version moves with every removal.
// A room an operation changed is written even when its bytes stay the same (a renewal within
// the same millisecond): every renewal is a write, as on the other stores.
func (m *Manager) roomsWrite(key ShardKey, doc *shardDoc, got roomsLoaded, touched map[string]bool) RoomsWrite {
	var w RoomsWrite
	bytesNow := doc.others
	for _, r := range doc.Rooms.slots {
		data := encodeEntry(r.entry)
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
		h := roomHead{Schema: shardSchema, Namespace: key.Namespace, Index: key.Index, Shards: m.shards, Floor: doc.Floor, Bytes: bytesNow}
		w.Head, _ = json.Marshal(h)
		w.HeadVersion = got.read.HeadVersion
	}
	return w
}

// writeRooms applies w. A conflict, or an unknown outcome whose read-back does not find exactly
// what w wrote, is lease.ErrConflict — to decide again; maybe reports that the write may have
// landed all the same.
func (m *Manager) writeRooms(ctx context.Context, key ShardKey, w RoomsWrite) (v lease.Version, maybe bool, err error) {
	v, err = m.rs.WriteRooms(ctx, key, w)
	switch {
	case err == nil:
		return v, false, nil
	case errors.Is(err, lease.ErrAmbiguous):
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
		defer cancel()
		ids := make([]string, 0, len(w.Put)+len(w.Delete))
		for _, r := range w.Put {
			ids = append(ids, r.ID)
		}
		for _, r := range w.Delete {
			ids = append(ids, r.ID)
		}
		read, rerr := m.rs.LoadRooms(rctx, key, ids, 0, 0)
		if rerr != nil {
			return 0, true, fmt.Errorf("%w; reading it back failed too: %w", err, rerr)
		}
		if landed(w, read) {
			return 0, false, nil // landed, at a version not known
		}
		return 0, true, fmt.Errorf("%w: %w", lease.ErrConflict, err)
	case errors.Is(err, lease.ErrExists), errors.Is(err, lease.ErrNotFound):
		return 0, false, fmt.Errorf("%w: %w", lease.ErrConflict, err)
	}
	return 0, false, err
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

// onlyCampaigns reports whether every op of batch is a campaign.
func onlyCampaigns(batch []*op) bool {
	for _, o := range batch {
		if o.kind != opCampaign {
			return false
		}
	}
	return true
}

// onlyRenewals reports whether every op of batch is a renewal.
func onlyRenewals(batch []*op) bool {
	for _, o := range batch {
		if o.kind != opRenew {
			return false
		}
	}
	return true
}

// allChanged reports whether every op of batch changed its room on the attempt's decision.
func allChanged(batch []*op) bool {
	for _, o := range batch {
		if !o.out.changed {
			return false
		}
	}
	return true
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
