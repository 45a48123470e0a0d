package rooms

import (
	"encoding/json"
	"iter"
	"slices"
	"strings"
)

// roomSet is a shard's rooms, sorted by id. Every write changes a copy of its shard's document
// (documents are shared once written or read), so the rooms are copied on every write: as a
// map, a copy allocated a table of eight slots of some hundred bytes each even for the one or
// two rooms most shards hold, and was a quarter of the server's bytes allocated per request. A
// sorted slice copies only the rooms there are, looks one up by binary search, and is already
// in the order the canonical encoding writes them.
//
// Its JSON form is a map's: an object of the rooms by id, keys sorted.
type roomSet struct {
	slots []roomSlot
}

// roomSlot is one room of a roomSet.
type roomSlot struct {
	id    string
	entry roomEntry
}

// len returns how many rooms the set holds.
func (s *roomSet) len() int { return len(s.slots) }

// find returns where room id is, or would be inserted, and whether it is there.
func (s *roomSet) find(id string) (int, bool) {
	return slices.BinarySearchFunc(s.slots, id, func(r roomSlot, id string) int { return strings.Compare(r.id, id) })
}

// get returns room id's entry.
func (s *roomSet) get(id string) (roomEntry, bool) {
	if i, ok := s.find(id); ok {
		return s.slots[i].entry, true
	}
	return roomEntry{}, false
}

// set sets room id to e.
func (s *roomSet) set(id string, e roomEntry) {
	i, ok := s.find(id)
	if ok {
		s.slots[i].entry = e
		return
	}
	s.slots = slices.Insert(s.slots, i, roomSlot{id: id, entry: e})
}

// delete removes room id, if the set holds it.
func (s *roomSet) delete(id string) {
	if i, ok := s.find(id); ok {
		s.slots = slices.Delete(s.slots, i, i+1)
	}
}

// all yields the rooms in id order.
func (s *roomSet) all() iter.Seq2[string, roomEntry] {
	return func(yield func(string, roomEntry) bool) {
		for _, r := range s.slots {
			if !yield(r.id, r.entry) {
				return
			}
		}
	}
}

// clone returns a copy that shares no storage with s: changing either leaves the other as it
// was.
func (s *roomSet) clone() roomSet {
	if len(s.slots) == 0 {
		return roomSet{}
	}
	return roomSet{slots: slices.Clone(s.slots)}
}

// MarshalJSON encodes the rooms as encoding/json encodes a map of them: keys sorted, and, since
// an encoder only compacts what a Marshaler returns, escaped exactly as the encoder around it
// would escape the map — HTML characters left as they are here, and escaped by that encoder if
// it escapes HTML.
func (s roomSet) MarshalJSON() ([]byte, error) {
	m := make(map[string]roomEntry, len(s.slots))
	for _, r := range s.slots {
		m[r.id] = r.entry
	}
	return CanonicalJSON(m), nil
}

// UnmarshalJSON decodes the rooms as encoding/json decodes a map of them (null is none; of a
// key given twice, the last wins).
func (s *roomSet) UnmarshalJSON(data []byte) error {
	var m map[string]roomEntry
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	s.slots = make([]roomSlot, 0, len(m))
	for id, e := range m {
		s.slots = append(s.slots, roomSlot{id: id, entry: e})
	}
	slices.SortFunc(s.slots, func(a, b roomSlot) int { return strings.Compare(a.id, b.id) })
	return nil
}
