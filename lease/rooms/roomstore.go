package rooms

import (
	"context"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// DefaultMaxActiveRoomsIndividual is the active-room limit of a Manager on a RoomStore when
// WithMaxActiveRooms is not given: such a store holds no shard document that grows with the
// rooms, and counts them without reading them (docs/rooms.md §3).
const DefaultMaxActiveRoomsIndividual = 1_000_000

// RoomStore is implemented by stores that keep every room under a key of its own (etcd), next
// to a small head per shard that carries the shard's term floor. A Manager on such a store
// reads and writes only the rooms an operation names — never a whole shard — and counts the
// active rooms in the store, so that neither a write nor the process's memory grows with the
// number of rooms (docs/rooms.md §2). The shard stays the unit of the floor and of group
// commit; the store's rooms.Store methods present the same data as shard documents.
//
// A RoomStore keeps an index of the rooms by expiry (ExpiresMs), for CountRooms and for the
// collection of expired rooms (RoomsRead.Expired).
type RoomStore interface {
	Store
	// LoadRooms reads, in one linearizable request, the head of shard key, the rooms ids of
	// it that are stored, and — when expiredBefore is positive — up to limit rooms of the
	// shard whose ExpiresMs is below expiredBefore (ID, ExpiresMs and Size only).
	LoadRooms(ctx context.Context, key ShardKey, ids []string, expiredBefore int64, limit int) (RoomsRead, error)
	// WriteRooms applies w at once, or not at all: lease.ErrConflict when the head or a room
	// is no longer at the version w expects (lease.ErrNotFound is never returned),
	// lease.ErrAmbiguous when the outcome is unknown. On success it returns the shard's new
	// version (what LoadShard would return).
	WriteRooms(ctx context.Context, key ShardKey, w RoomsWrite) (lease.Version, error)
	// CountRooms counts the rooms of namespace's shards 0 … shards−1 whose ExpiresMs is above
	// after, in one linearizable request, and returns the lowest such ExpiresMs (0 when none).
	CountRooms(ctx context.Context, namespace string, shards int, after int64) (n int, firstExpiresMs int64, err error)
	// NotifyRoom returns a channel that receives a value (coalesced, capacity 1) whenever room
	// roomID of shard key may have changed, until ctx ends; the channel is closed then.
	NotifyRoom(ctx context.Context, key ShardKey, roomID string) (<-chan struct{}, error)
}

// ShardHead is a shard's head on a RoomStore, as the Manager writes it (RoomsWrite.Head): the
// fields of the shard document but its rooms (docs/rooms.md §2), and Bytes, what its rooms
// account for (RoomBytes) against the byte budget.
type ShardHead struct {
	Schema    int    `json:"schema"`
	Namespace string `json:"ns"`
	Index     int    `json:"shard"`
	Shards    int    `json:"shards"`
	Floor     uint64 `json:"floor"`
	Bytes     int    `json:"bytes"`
}

// StoredRoom is one room as a RoomStore keeps it.
type StoredRoom struct {
	// ID is the room id.
	ID string
	// Data is the room's entry as the Manager encoded it; empty in RoomsRead.Expired and in
	// RoomsWrite.Delete.
	Data []byte
	// ExpiresMs is the room's expires_at in Unix milliseconds, the key of the expiry index.
	ExpiresMs int64
	// Size is what the room counts against its shard's byte budget (RoomBytes).
	Size int
	// Version is the room's version: as read, or, in a write, the version it must still have
	// (0: it must not be stored). For a deletion of a room read from RoomsRead.Expired it is
	// 0, and the deletion is conditional on the room still having ExpiresMs.
	Version lease.Version
	// PrevExpiresMs is, in RoomsWrite.Put, the ExpiresMs of the stored room it replaces (its
	// index entry moves); unused when Version is 0.
	PrevExpiresMs int64
}

// RoomsRead is what LoadRooms read.
type RoomsRead struct {
	// Head is the shard's head document; nil when the shard is not stored.
	Head []byte
	// HeadVersion is the head's version (0 when not stored).
	HeadVersion lease.Version
	// Rooms are the requested rooms that are stored.
	Rooms []StoredRoom
	// Expired are rooms of the shard that expired before the bound asked for.
	Expired []StoredRoom
}

// RoomsWrite is one atomic write of a shard's rooms.
type RoomsWrite struct {
	// Head, when not nil, replaces the shard's head, which must still be at HeadVersion (0:
	// not stored). Every write that removes a room or moves the floor writes the head, so
	// that the shard's version moves with every change.
	Head        []byte
	HeadVersion lease.Version
	// Put stores rooms, each conditional on its Version.
	Put []StoredRoom
	// Delete removes rooms, each conditional on its Version (or, at 0, its ExpiresMs).
	Delete []StoredRoom
}

// RoomBytes is what a room counts against its shard's byte budget on a RoomStore: its entry
// and id as they appear in the shard document, with room for a renewal's longer ttl. Stores
// that present their rooms as shard documents account the same way.
func RoomBytes(id string, entry []byte) int { return len(id) + len(entry) + 6 }
