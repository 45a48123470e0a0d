package rooms

import (
	"math"
	"strconv"
	"time"
)

// A document being changed for a write remembers two things about itself, kept through every
// change made by put and remove, so that an operation costs no walk of the whole shard:
//
//   - The length of its encoding, once known — encoded for a write, or measured by the first
//     activation that needs it: a shard's byte budget is checked on every activation, against
//     the size the document would have with the new room.
//   - A time before which none of its rooms expires, once collect has walked them: garbage
//     collection runs on every attempt, and walks the rooms again only once that time has come.

// setSize records that the document's encoding is n bytes long. Only the Manager's own copy
// of a document, changed for a write and not written yet, is ever sized: documents that other
// goroutines may read are never written to (the count's index, which may already hold the
// copy, reads its rooms alone).
func (d *shardDoc) setSize(n int) { d.size, d.sized = n, true }

// encodedSize returns the length of the document's encoding, encoding it once if unknown.
func (d *shardDoc) encodedSize() int {
	if !d.sized {
		d.setSize(len(d.encode()))
	}
	return d.size
}

// sizeWith returns the length of the document's encoding with room id set to *e — of a partial
// document, what its shard accounts (partialBytes). old is the room's entry in the document,
// nil when it has none: the caller has looked it up already.
func (d *shardDoc) sizeWith(id string, e, old *roomEntry) int {
	if d.partial {
		return d.partialBytes(id, e)
	}
	if old != nil && old.Candidate == e.Candidate && old.Metadata == e.Metadata {
		// A renewal: only the numbers change (the hash is always 43 characters), and numbers
		// are written in decimal whatever else needs escaping.
		return d.encodedSize() + numbersWidth(e) - numbersWidth(old)
	}
	n := d.encodedSize() + entrySize(id, *e) - 1 // entrySize counts a comma
	switch {
	case old != nil:
		n -= entrySize(id, *old) - 1
	case d.Rooms.len() > 0:
		n++ // the comma between it and the others
	}
	return n
}

// numbersWidth is how many characters the numbers of a room's entry take.
func numbersWidth(e *roomEntry) int {
	var b [20]byte
	return len(strconv.AppendUint(b[:0], e.Term, 10)) + len(strconv.AppendInt(b[:0], e.ExpiresMs, 10)) +
		len(strconv.AppendInt(b[:0], e.TTLSec, 10))
}

// put sets room id to e; old is its entry in the document, nil when it has none (as for
// sizeWith).
func (d *shardDoc) put(id string, e roomEntry, old *roomEntry) {
	if d.sized {
		d.size = d.sizeWith(id, &e, old)
	}
	if d.bounded { // a renewal's earlier expiry stays a bound, only a lower one than needed
		d.expiresLow = min(d.expiresLow, e.ExpiresMs)
	}
	d.Rooms.set(id, e)
}

// remove drops room id (the expiry bound stays one).
func (d *shardDoc) remove(id string) {
	old, ok := d.Rooms.get(id)
	if !ok {
		return
	}
	d.unsize(id, old, d.Rooms.len())
	d.Rooms.delete(id)
}

// unsize takes room id, whose entry is old, out of the remembered size, when there is one; n
// is how many rooms the document holds before it goes.
func (d *shardDoc) unsize(id string, old roomEntry, n int) {
	if d.sized {
		d.size -= entrySize(id, old) - 1
		if n > 1 {
			d.size-- // its comma
		}
	}
}

// collect drops the rooms whose lease has ended at now by the Manager's rule (Manager.live).
// It walks the rooms only when the earliest expiry it knows may have passed, and then learns
// the exact earliest expiry of the rooms that stay.
func (m *Manager) collect(doc *shardDoc, now time.Time) {
	if doc.bounded && m.live(roomEntry{ExpiresMs: doc.expiresLow}, now) {
		return // every room expires at expiresLow or later: all are live
	}
	low := int64(math.MaxInt64)
	n := doc.Rooms.len()
	// Filtered in place: doc is the Manager's own copy, its storage shared with no other.
	kept := doc.Rooms.slots[:0]
	for _, r := range doc.Rooms.slots {
		if m.live(r.entry, now) {
			kept = append(kept, r)
			low = min(low, r.entry.ExpiresMs)
			continue
		}
		doc.unsize(r.id, r.entry, n)
		n--
	}
	clear(doc.Rooms.slots[len(kept):]) // no dropped room stays reachable
	doc.Rooms.slots = kept
	doc.expiresLow, doc.bounded = low, true
}
