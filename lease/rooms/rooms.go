package rooms

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// Status is what a room, or a campaign's caller, is.
type Status string

// Statuses, spelled as on the wire.
const (
	// StatusLeader: the room has a live leader (for a campaign: the caller won).
	StatusLeader Status = "leader"
	// StatusFollower: a campaign found another live leader (possibly the caller itself).
	StatusFollower Status = "follower"
	// StatusVacant: the room has no live leader.
	StatusVacant Status = "vacant"
)

// Leader is the public state of a room's current term. It never includes the token.
type Leader struct {
	// CandidateID is the leader's candidate id.
	CandidateID string
	// Metadata is the leader's metadata; empty when it gave none.
	Metadata string
	// Term is the term's fence, named as on the wire (leader.term): strictly increasing within
	// the room, never reused.
	Term uint64
	// ExpiresAt is when the lease ends by the clock of the server that last wrote it
	// (millisecond precision, UTC).
	ExpiresAt time.Time
	// TTL is the lease duration the leader asked for last.
	TTL time.Duration
}

// Result answers Campaign and Renew.
type Result struct {
	// RoomID is the room.
	RoomID string
	// Status is StatusLeader (the caller holds the term) or StatusFollower.
	Status Status
	// Leader is the room's leader: the caller when Status is StatusLeader.
	Leader Leader
	// Token is the leader token, only when Status is StatusLeader. A winning campaign returns a
	// fresh one, exactly once (only its hash is stored); a renewal echoes the caller's.
	Token string
	// RenewAfter is when the leader should renew: half the TTL. Zero for followers.
	RenewAfter time.Duration
	// RetryAfter is, for followers, how long until the leader's lease can be taken over:
	// expires_at plus the maximum clock skew, minus now. Zero for leaders.
	RetryAfter time.Duration
}

// RoomState answers Status.
type RoomState struct {
	// RoomID is the room.
	RoomID string
	// Status is StatusLeader or StatusVacant.
	Status Status
	// Leader is the live leader; nil when the room is vacant.
	Leader *Leader
	// RetryAfter is how long until the leader's lease can be taken over; zero when vacant.
	RetryAfter time.Duration
}

// Manager runs the rooms of one namespace on a Store. It is safe for concurrent use; operations
// on rooms of the same shard are group-committed (see docs/rooms.md). Several Managers — in one
// process or in the replicas of a server — may serve the same namespace on the same store.
type Manager struct {
	store         Store
	ns            string
	shards        int
	maxActive     int
	maxShardBytes int
	skew          time.Duration
	maxCASRetries int
	countMaxAge   time.Duration
	clock         lease.Clock
	budgetSet     bool // WithMaxShardBytes was given: on a RoomStore there is no budget by default

	// layout is how the store keeps the shards (layout.go); maxBatch bounds the ops it writes
	// at once.
	layout   layout
	maxBatch int
	queues   []*shardQueue
	// deciding serialises the activations' counts and decisions (a layout's decide).
	deciding sync.Mutex
	// batches gives the batches' store calls their deadline (batchctx.go).
	batches batchContexts
}

// New returns a Manager for the rooms of namespace on store.
func New(store Store, namespace string, opts ...Option) (*Manager, error) {
	m := &Manager{
		store:         store,
		ns:            namespace,
		shards:        DefaultShards,
		maxActive:     DefaultMaxActiveRooms,
		maxShardBytes: DefaultMaxShardBytes,
		skew:          DefaultMaxClockSkew,
		maxCASRetries: lease.DefaultMaxCASRetries,
		countMaxAge:   DefaultCountMaxAge,
		clock:         lease.SystemClock{},
	}
	rs, keys := store.(RoomStore)
	if keys { // no shard document grows with the rooms (docs/rooms.md §2)
		m.shards, m.maxActive = DefaultShardsIndividual, DefaultMaxActiveRoomsIndividual
	}
	for _, opt := range opts {
		opt(m)
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	if keys {
		m.layout, m.maxBatch = newKeyLayout(m, rs), maxRoomBatch
	} else {
		m.layout, m.maxBatch = newDocLayout(m), math.MaxInt
	}
	m.queues = make([]*shardQueue, m.shards)
	for i := range m.queues {
		m.queues[i] = &shardQueue{key: ShardKey{Namespace: namespace, Index: i}, sem: make(chan struct{}, 1)}
	}
	return m, nil
}

// Namespace returns the Manager's namespace.
func (m *Manager) Namespace() string { return m.ns }

// Store returns the Manager's store.
func (m *Manager) Store() Store { return m.store }

// Shards returns the number of shards.
func (m *Manager) Shards() int { return m.shards }

// MaxActiveRooms returns the limit on rooms with a live lease in force (0: none): the one
// WithMaxActiveRooms gave, else the store's default.
func (m *Manager) MaxActiveRooms() int { return m.maxActive }

// ShardOf returns the shard of a room: rooms of one shard share writes and notifications, so a
// watcher of many rooms can read each shard once.
func (m *Manager) ShardOf(roomID string) int { return shardIndex(roomID, m.shards) }

// Campaign asks for the leadership of room roomID as candidateID, for ttl (whole seconds, 5 to
// 300), with optional metadata (at most 1024 characters). The checks run in the contract's
// order: room id, candidate, metadata, ttl.
//
// When the room has no live lease the caller becomes leader: a new term above every term the
// room (and its shard) ever had, and a fresh token returned once. When it has one — also when
// the live leader is the caller itself — the caller is a follower, told who leads and when to
// retry, and nothing is written. A room that is not active counts against the active-room limit:
// refused with a *CapacityError (errors.Is ErrCapacity).
func (m *Manager) Campaign(ctx context.Context, roomID, candidateID string, ttl time.Duration, metadata string) (Result, error) {
	if err := errors.Join(ValidateRoomID(roomID), ValidateCandidateID(candidateID), ValidateMetadata(metadata), ValidateTTL(ttl)); err != nil {
		return Result{}, m.wrap("campaign", roomID, firstError(err))
	}
	o := newOp()
	o.token, o.hash = newToken()
	o.kind, o.room, o.candidate, o.metadata, o.ttl = opCampaign, roomID, candidateID, metadata, ttl
	if err := m.submit(ctx, o); err != nil {
		return Result{}, m.wrap("campaign", roomID, err)
	}
	res, err := o.res, o.err
	o.recycle()
	return res, m.wrap("campaign", roomID, err)
}

// Renew extends the caller's term for ttl from now (which may shorten it), keeping the term. It
// fails with ErrInvalidToken for a malformed token, ErrVacant when the room has no live lease
// (never held, resigned, expired) and ErrNotCurrent when another term holds the room.
func (m *Manager) Renew(ctx context.Context, roomID, token string, ttl time.Duration) (Result, error) {
	hash, err := m.checkToken(roomID, token)
	if err == nil {
		err = ValidateTTL(ttl)
	}
	if err != nil {
		return Result{}, m.wrap("renew", roomID, err)
	}
	o := newOp()
	o.kind, o.room, o.ttl, o.token, o.hash = opRenew, roomID, ttl, token, hash
	if err := m.submit(ctx, o); err != nil {
		return Result{}, m.wrap("renew", roomID, err)
	}
	res, err := o.res, o.err
	o.recycle()
	return res, m.wrap("renew", roomID, err)
}

// Resign ends the caller's term at once and returns it; the room becomes vacant and its next
// term is higher. Errors as for Renew.
func (m *Manager) Resign(ctx context.Context, roomID, token string) (previousTerm uint64, err error) {
	hash, err := m.checkToken(roomID, token)
	if err != nil {
		return 0, m.wrap("resign", roomID, err)
	}
	o := newOp()
	o.kind, o.room, o.token, o.hash = opResign, roomID, token, hash
	if err := m.submit(ctx, o); err != nil {
		return 0, m.wrap("resign", roomID, err)
	}
	prev, err := o.prev, o.err
	o.recycle()
	return prev, m.wrap("resign", roomID, err)
}

// Status reads the room. An unknown room is vacant, not an error; nothing is ever written.
func (m *Manager) Status(ctx context.Context, roomID string) (RoomState, error) {
	if err := ValidateRoomID(roomID); err != nil {
		return RoomState{}, m.wrap("status", roomID, err)
	}
	doc, err := m.layout.load(ctx, m.key(roomID), []string{roomID})
	if err != nil {
		return RoomState{}, m.wrap("status", roomID, err)
	}
	return m.stateOf(doc, roomID, m.now()), nil
}

// Notify returns a channel that receives a value whenever the room may have changed, until ctx
// ends. It fires for every write to the room's shard (on a RoomStore, to the room alone): a hint, after which the consumer reads
// Status and drops duplicates; consumers must poll as well. ErrNoNotifier when the store has no
// notifications.
func (m *Manager) Notify(ctx context.Context, roomID string) (<-chan struct{}, error) {
	if err := ValidateRoomID(roomID); err != nil {
		return nil, m.wrap("notify", roomID, err)
	}
	ch, err := m.layout.notify(ctx, m.key(roomID), roomID)
	return ch, m.wrap("notify", roomID, err)
}

func (m *Manager) key(roomID string) ShardKey {
	return ShardKey{Namespace: m.ns, Index: m.ShardOf(roomID)}
}

func (m *Manager) checkToken(roomID, token string) (tokenHash, error) {
	if err := ValidateRoomID(roomID); err != nil {
		return tokenHash{}, err
	}
	return hashToken(token)
}

// now reads the wall clock at the stored precision (milliseconds), so that the times handed out
// (expires_at, retry_after) are exactly what a later read computes from the store.
func (m *Manager) now() time.Time { return m.clock.Now().Round(0).Truncate(time.Millisecond) }

// live reports whether a room's lease still holds at now: until expires_at plus the allowed
// clock skew between the replicas that stamp and read it. Status, renew, resign, takeover,
// garbage collection and the active-room count all use this one rule.
func (m *Manager) live(e roomEntry, now time.Time) bool {
	return now.Before(e.expiresAt().Add(m.skew))
}

func (m *Manager) retryAfter(e roomEntry, now time.Time) time.Duration {
	return max(e.expiresAt().Add(m.skew).Sub(now), 0)
}

// placed names shard index as the place of a *lease.CorruptError found in it: the name is
// only made for an error.
func (m *Manager) placed(err error, index int) error {
	var ce *lease.CorruptError
	if errors.As(err, &ce) && ce.Where == "" {
		ce.Where = fmt.Sprintf("shard %d of rooms namespace %q in the %s", index, m.ns, m.store.Describe())
	}
	return err
}

func (m *Manager) wrap(op, roomID string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s room %q: %w", op, truncate(roomID), err)
}

// firstError returns the first error of an errors.Join result: the contract reports one check,
// in its order.
func firstError(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		if errs := j.Unwrap(); len(errs) > 0 {
			return errs[0]
		}
	}
	return err
}

// Statuses reads several rooms at once, each shard once: a watcher of many rooms costs one
// store read per shard, not one per room. Every id must be valid; the map has one entry per
// distinct id.
func (m *Manager) Statuses(ctx context.Context, roomIDs []string) (map[string]RoomState, error) {
	byShard := map[int][]string{}
	for _, id := range roomIDs {
		if err := ValidateRoomID(id); err != nil {
			return nil, m.wrap("status", id, err)
		}
		i := m.ShardOf(id)
		byShard[i] = append(byShard[i], id)
	}
	out := make(map[string]RoomState, len(roomIDs))
	for i, ids := range byShard {
		doc, err := m.layout.load(ctx, ShardKey{Namespace: m.ns, Index: i}, ids)
		if err != nil {
			return nil, fmt.Errorf("status of %d rooms in shard %d: %w", len(ids), i, err)
		}
		now := m.now()
		for _, id := range ids {
			out[id] = m.stateOf(doc, id, now)
		}
	}
	return out, nil
}

// stateOf is a room's public state in doc at now.
func (m *Manager) stateOf(doc *shardDoc, roomID string, now time.Time) RoomState {
	e, ok := doc.Rooms.get(roomID)
	if !ok || !m.live(e, now) {
		return RoomState{RoomID: roomID, Status: StatusVacant}
	}
	l := e.leader()
	return RoomState{RoomID: roomID, Status: StatusLeader, Leader: &l, RetryAfter: m.retryAfter(e, now)}
}
