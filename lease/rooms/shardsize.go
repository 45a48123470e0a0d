package rooms

// A shard's byte budget is checked on every activation, against the size the document would
// have with the new room. A document remembers the length of its encoding once it is known —
// encoded for a write, or measured by the first activation that needs it — and keeps it exact
// through every change made by put and remove, so that an activation on a document the
// Manager wrote costs no encoding of the whole shard.

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

// sizeWith returns the length of the document's encoding with room id set to e.
func (d *shardDoc) sizeWith(id string, e roomEntry) int {
	n := d.encodedSize() + entrySize(id, e) - 1 // entrySize counts a comma
	switch old, ok := d.Rooms[id]; {
	case ok:
		n -= entrySize(id, old) - 1
	case len(d.Rooms) > 0:
		n++ // the comma between it and the others
	}
	return n
}

// put sets room id to e.
func (d *shardDoc) put(id string, e roomEntry) {
	if d.sized {
		d.size = d.sizeWith(id, e)
	}
	d.Rooms[id] = e
}

// remove drops room id.
func (d *shardDoc) remove(id string) {
	old, ok := d.Rooms[id]
	if !ok {
		return
	}
	if d.sized {
		d.size -= entrySize(id, old) - 1
		if len(d.Rooms) > 1 {
			d.size-- // its comma
		}
	}
	delete(d.Rooms, id)
}
