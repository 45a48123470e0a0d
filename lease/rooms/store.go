package rooms

import (
	"context"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// ShardKey names one shard of a namespace's rooms.
type ShardKey struct {
	// Namespace is the rooms namespace (lease.ValidateNamespace rules).
	Namespace string
	// Index is the shard number, 0 ≤ Index < the namespace's shard count.
	Index int
}

// Shard is one stored shard document, as listed by Store.ListShards.
type Shard struct {
	// Index is the shard number.
	Index int
	// Data is the shard's JSON document.
	Data []byte
	// Version is the store's version of Data.
	Version lease.Version
}

// Store keeps the shards of room namespaces: opaque JSON documents, each written by
// compare-and-swap on a version, like lease.Store does for election records. Every rule lives in
// Manager; the stores only keep bytes. The memory store is NewMemoryStore; *filestore.Store and
// *swarmstore.Store implement Store too.
//
// Implementations must be safe for concurrent use. Errors wrap the lease sentinels
// (lease.ErrNotFound, ErrExists, ErrConflict, ErrAmbiguous, ErrUnavailable, ErrNotManager,
// ErrNoQuorum) or are a *lease.CorruptError.
type Store interface {
	// LoadShard returns the shard's document and version, or lease.ErrNotFound.
	LoadShard(ctx context.Context, key ShardKey) ([]byte, lease.Version, error)
	// CreateShard stores the first document of the shard, or returns lease.ErrExists — or an
	// error wrapping lease.ErrAmbiguous when it cannot tell whether the document it sent was
	// stored (the Swarm store, when a manager may have sent the create twice).
	CreateShard(ctx context.Context, key ShardKey, data []byte) (lease.Version, error)
	// UpdateShard replaces the shard's document if its version is still expected; otherwise
	// lease.ErrConflict (or lease.ErrNotFound when it is gone). lease.ErrAmbiguous means the
	// write may or may not have been applied. On success it returns the version this write
	// created — never a later write's — or 0 when it cannot be known.
	UpdateShard(ctx context.Context, key ShardKey, data []byte, expected lease.Version) (lease.Version, error)
	// ListShards returns every stored shard of namespace, in any order.
	ListShards(ctx context.Context, namespace string) ([]Shard, error)
	// DeleteShards removes every shard of namespace (and with them their term floors: see
	// docs/rooms.md on re-created shards). Removing nothing is not an error.
	DeleteShards(ctx context.Context, namespace string) error
	// Describe names the store for messages and logs.
	Describe() string
}

// ActivationLocker is implemented by stores that can serialise activations (campaigns that make
// a room active) across every process using the store, which makes the active-room limit exact
// for them. The Manager takes the lock before counting the active rooms and holds it until its
// conditional write is done.
type ActivationLocker interface {
	// LockActivations blocks until the namespace's activation lock is held or ctx ends, and
	// returns the function that releases it.
	LockActivations(ctx context.Context, namespace string) (unlock func(), err error)
}

// ShardVersionLister is implemented by stores that can list the versions of a namespace's shards
// for much less than their documents: the active-room count then reads only the shards whose
// version changed since it last looked (docs/rooms.md §3).
type ShardVersionLister interface {
	// ShardVersions returns the version of every stored shard of namespace, by index: the
	// version LoadShard would return, or any other value when it cannot be told cheaply (the
	// shard is then read).
	ShardVersions(ctx context.Context, namespace string) (map[int]lease.Version, error)
}

// ShardVersionReader is implemented by stores that can copy the versions of a namespace's shards
// into an array the caller owns, which a Manager prefers to ShardVersionLister: the active-room
// count lists the versions on every activation, and a map made for each listing cost more than
// the comparison it serves.
type ShardVersionReader interface {
	// ReadShardVersions sets versions[i] to the version of shard i of namespace — the version
	// LoadShard would return, or any other non-zero value when it cannot be told cheaply (the
	// shard is then read) — and to 0 when shard i is not stored. A shard stored at an index
	// outside the array is an error.
	ReadShardVersions(ctx context.Context, namespace string, versions *[MaxShards]lease.Version) error
}

// ShardNotifier is implemented by stores that can tell promptly when a shard may have changed.
// Notifications are hints: a missed or spurious one is harmless because consumers also poll.
type ShardNotifier interface {
	// NotifyShard returns a channel that receives a value (coalesced, capacity 1) whenever the
	// shard may have changed, until ctx ends; the channel is closed then.
	NotifyShard(ctx context.Context, key ShardKey) (<-chan struct{}, error)
}

// Damage is stored state that a store found damaged and worked around — a file store slot that
// failed its checksum, was cut short or vanished while the other slot still held the shard. It
// is never routine: the shard may have lost its newest, acknowledged version (terms stay safe,
// see nextTerm; room states may have rolled back).
type Damage struct {
	// Where names the damaged object, e.g. the slot file's path.
	Where string
	// Reason says what is wrong with it and what the store did instead.
	Reason string
	// At is when it was found (UTC).
	At time.Time
}

// DamageReporter is implemented by stores that can find their own state damaged and keep
// serving what survived; the server logs, counts and shows in /readyz what they report.
type DamageReporter interface {
	// OnDamage registers fn, called for every damage found from now on. It runs in the
	// operation that found the damage and must return quickly.
	OnDamage(fn func(Damage))
}

// WriteChecker is implemented by stores that can tell whether a write would fail now for lack
// of space or permission, without writing a shard. /readyz asks it, so that a server that can
// read but not write is taken out of rotation until the store can write again.
type WriteChecker interface {
	// CheckWritable returns nil when the store can write, else an error wrapping
	// lease.ErrStoreFull, lease.ErrPermission or lease.ErrUnavailable.
	CheckWritable(ctx context.Context) error
}
