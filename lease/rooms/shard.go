package rooms

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// shardSchema is the layout version of a shard document; a document of another schema is
// never overwritten.
const shardSchema = 1

// shardDoc is one shard: the rooms of a namespace whose id hashes to it, and its term floor.
// Field names are short because on Swarm every write carries the whole document twice.
type shardDoc struct {
	Schema    int    `json:"schema"`
	Namespace string `json:"ns"`
	Index     int    `json:"shard"`
	Shards    int    `json:"shards"`
	// Floor is the highest term the shard ever issued. It survives the rooms that carried it,
	// so a new term (at least Floor+1, see nextTerm) is above every earlier term of every room
	// of the shard.
	Floor uint64 `json:"floor"`
	// Rooms holds the rooms that may still be live; expired ones are dropped by the next write.
	Rooms roomSet `json:"rooms"`

	// size is the length of the document's encoding, when sized; expiresLow is at most the
	// earliest expires_at of its rooms (Unix ms), when bounded (shardedit.go).
	size       int
	sized      bool
	expiresLow int64
	bounded    bool

	// partial marks a document read from a RoomStore: it holds only the rooms a batch names,
	// and its byte budget is what the head accounts (keylayout.go): others is the bytes of the
	// shard's rooms not in Rooms.
	partial bool
	others  int
}

// roomEntry is the stored state of one room's current (or last, not yet collected) term.
type roomEntry struct {
	Candidate string `json:"c"`
	Metadata  string `json:"m,omitempty"`
	Term      uint64 `json:"t"`
	// ExpiresMs is expires_at in Unix milliseconds (the contract's precision).
	ExpiresMs int64 `json:"e"`
	// TTLSec is the lease duration in whole seconds.
	TTLSec int64 `json:"l"`
	// Hash is SHA-256 of the leader token: the token itself is never stored.
	Hash tokenHash `json:"h"`
}

// MarshalText encodes the hash as base64url without padding (43 characters).
func (h tokenHash) MarshalText() ([]byte, error) {
	return []byte(base64.RawURLEncoding.EncodeToString(h[:])), nil
}

// UnmarshalText decodes a hash written by MarshalText.
func (h *tokenHash) UnmarshalText(b []byte) error {
	raw, err := tokenEncoding.DecodeString(string(b))
	if err != nil || len(raw) != len(h) {
		return fmt.Errorf("not a base64url SHA-256 hash")
	}
	copy(h[:], raw)
	return nil
}

func (e roomEntry) expiresAt() time.Time { return time.UnixMilli(e.ExpiresMs).UTC() }

func (e roomEntry) leader() Leader {
	var l Leader
	e.setLeader(&l)
	return l
}

// setLeader makes l the public state of e's term.
func (e *roomEntry) setLeader(l *Leader) {
	l.CandidateID, l.Metadata, l.Term = e.Candidate, e.Metadata, e.Term
	l.ExpiresAt, l.TTL = e.expiresAt(), time.Duration(e.TTLSec)*time.Second
}

// nextTerm is the term a new leader in a shard whose floor is floor gets at wall-clock time now:
// above the floor, and at least now in Unix microseconds. The floor alone keeps terms strictly
// increasing; the clock is what keeps a term from being issued twice when a store loses its
// newest versions of the shard (a damaged file store slot, a restored backup): the shard then
// reads an older floor, but the clock has moved past every term acknowledged before the loss
// (docs/safety.md §7b). The clock is read at full precision, not the stored milliseconds, so
// that terms run ahead of it only while a shard issues more than one per microsecond.
func nextTerm(floor uint64, now time.Time) uint64 {
	return max(floor+1, uint64(max(now.UnixMicro(), 0)))
}

// newShard is the first document of a shard. Its floor starts at the wall clock in Unix
// microseconds, so a shard created again (store wiped, memory store restarted) issues terms
// above the old ones as long as N + L ≤ T (docs/rooms.md, docs/safety.md §2).
func newShard(key ShardKey, shards int, now time.Time) *shardDoc {
	return &shardDoc{Schema: shardSchema, Namespace: key.Namespace, Index: key.Index, Shards: shards,
		Floor: uint64(max(now.UnixMicro(), 0))}
}

// clone returns a copy of d to change for a write: d itself may be shared.
func (d *shardDoc) clone() *shardDoc {
	if d.Rooms.len() <= 1 {
		s := &smallShard{doc: *d}
		s.doc.Rooms.slots = s.room[:copy(s.room[:], d.Rooms.slots)]
		return &s.doc
	}
	c := *d
	c.Rooms = d.Rooms.clone()
	return &c
}

// smallShard is the copy of a document of one room or none, and the storage of its rooms, made
// at once: most shards hold one room or none (a namespace has more shards than live rooms
// until it is busy), and so one allocation of a write is saved, and a campaign in an empty
// shard needs none for its room. A room added beyond the one moves the rooms out, as append
// does.
type smallShard struct {
	doc  shardDoc
	room [1]roomSlot
}

// encode returns the document's canonical bytes: map keys sorted, no HTML escaping (it would
// only cost bytes), no trailing newline. Equal documents encode to equal bytes, which is how an
// unknown write outcome is recognised on read-back.
func (d *shardDoc) encode() []byte {
	// About 200 bytes a room and 100 around them: one allocation for most documents.
	if b, ok := appendShard(make([]byte, 0, 128+224*d.Rooms.len()), d); ok { // shardjson.go
		return b
	}
	return CanonicalJSON(d)
}

// CanonicalJSON is the encoding of shard documents and their parts: encoding/json's, with HTML
// escaping off and no trailing newline. A store that presents its data as shard documents
// encodes them with it, so that they are byte for byte what a Manager writes. It panics if v
// cannot be encoded: shard documents hold only strings and numbers.
func CanonicalJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("rooms: encode: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// entrySize is how many bytes a room adds to the encoded document (key, colon, value, comma).
func entrySize(id string, e roomEntry) int {
	var scratch [256]byte
	if b, ok := appendEntry(scratch[:0], id, e, true); ok { // shardjson.go
		return len(b) + 1 // the comma
	}
	return len(CanonicalJSON(id)) + len(CanonicalJSON(e)) + 2 // the colon and the comma
}

// decodeShard parses and checks a stored shard. Anything wrong is a *lease.CorruptError (its
// Where left to the caller, Manager.placed): nothing is written over a shard this version
// cannot fully understand.
func decodeShard(data []byte, key ShardKey, shards int) (*shardDoc, error) {
	var d shardDoc
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, &lease.CorruptError{Reason: fmt.Sprintf(
			"not a rooms shard (%v); repair it or remove the namespace's shards", err)}
	}
	if err := checkShardHeader(&d, key, shards); err != nil {
		return nil, err
	}
	for _, r := range d.Rooms.slots {
		if err := checkRoom(r.id, r.entry, key, shards, d.Floor); err != nil {
			return nil, err
		}
	}
	return &d, nil
}

// checkRoom checks room id of shard key, whose entry is e, in a shard whose floor is floor.
func checkRoom(id string, e roomEntry, key ShardKey, shards int, floor uint64) error {
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

// checkShardHeader checks that d is a shard of this version, namespace, index and shard count.
func checkShardHeader(d *shardDoc, key ShardKey, shards int) error {
	corrupt := func(field, value, reason string) error {
		return &lease.CorruptError{Field: field, Value: value, Reason: reason}
	}
	switch {
	case d.Schema != shardSchema:
		return corrupt("schema", fmt.Sprint(d.Schema), fmt.Sprintf("this version reads schema %d only; upgrade lfp-swarm-lease", shardSchema))
	case d.Namespace != key.Namespace:
		return corrupt("ns", d.Namespace, fmt.Sprintf("the shard belongs to another namespace than %q", key.Namespace))
	case d.Index != key.Index:
		return corrupt("shard", fmt.Sprint(d.Index), fmt.Sprintf("stored as shard %d", key.Index))
	case d.Shards != shards:
		return corrupt("shards", fmt.Sprint(d.Shards), fmt.Sprintf(
			"the namespace was created with %d shards but this server is configured with %d; every server of a namespace must use the same shard count", d.Shards, shards))
	}
	return nil
}

// shardIndex maps a room id to its shard: FNV-1a 64 of the id modulo the shard count. The
// mapping is part of the stored layout and must never change.
func shardIndex(roomID string, shards int) int {
	return int(fnv1a64(roomID) % uint64(shards))
}

// fnv1a64 is FNV-1a 64 of s, by hand: hash/fnv's hasher and the []byte of s cost two
// allocations per operation.
func fnv1a64(s string) uint64 {
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime64
	}
	return h
}
