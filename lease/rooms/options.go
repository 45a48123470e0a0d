package rooms

import (
	"errors"
	"fmt"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/timing"
)

// Defaults of the Manager settings.
const (
	// DefaultShards is how many shards a namespace's rooms are spread over. More shards make
	// each write smaller (a Swarm write carries its whole shard twice) at the cost of more
	// anchor services; docs/rooms.md has the numbers.
	DefaultShards = 64
	// DefaultShardsIndividual is the shard count of a Manager on a RoomStore when WithShards is
	// not given: there a shard is only a head key (the term floor), so more of them cost
	// nothing, and two servers' activations meet on a shard's head less often (BENCHMARKS.md).
	DefaultShardsIndividual = 256
	// MaxShards bounds WithShards.
	MaxShards = 256
	// DefaultMaxActiveRooms is the seed service's limit on rooms with a live lease.
	DefaultMaxActiveRooms = 10_000
	// DefaultMaxShardBytes is each shard document's byte budget. On Swarm a write carries the
	// shard twice (spec and previous spec) in one Raft proposal capped at 1.5 MiB.
	DefaultMaxShardBytes = 256 << 10
	// MinShardBytes is the smallest budget: one room with the longest ids and metadata fits.
	MinShardBytes = 16 << 10
	// MaxShardBytes is the largest budget that keeps a Swarm write inside one Raft proposal
	// (measured: current + previous label of 1504 KiB pass, 1568 KiB fail).
	MaxShardBytes = 700 << 10
	// DefaultCountMaxAge is how old the listing of the other shards may be when a store without
	// a cross-process activation lock (Swarm) counts the active rooms.
	DefaultCountMaxAge = time.Second
	// DefaultMaxClockSkew is how far apart the wall clocks of the server's replicas may be: the
	// lease's own default (the timing module's).
	DefaultMaxClockSkew = timing.DefaultMaxClockSkew
)

// storeTimeout bounds one batch's store calls. A batch serves several callers, so it does not
// stop when the caller that runs it goes away; Swarm answers within 20 s even without a leader.
const storeTimeout = 30 * time.Second

// Option configures a Manager.
type Option func(*Manager)

// WithShards sets how many shards the namespace's rooms are spread over (default DefaultShards,
// on a RoomStore DefaultShardsIndividual; 1 to MaxShards). Every process serving the namespace
// must use the same number: a shard stores the count and a Manager configured with another
// refuses it.
func WithShards(n int) Option { return func(m *Manager) { m.shards = n } }

// WithMaxActiveRooms bounds the number of rooms with a live lease (default
// DefaultMaxActiveRooms, on a RoomStore DefaultMaxActiveRoomsIndividual; 0 means no limit).
// docs/rooms.md says how exact it is per store.
func WithMaxActiveRooms(n int) Option { return func(m *Manager) { m.maxActive = n } }

// WithMaxShardBytes sets each shard document's byte budget (default DefaultMaxShardBytes,
// MinShardBytes to MaxShardBytes). A campaign that would take its shard over it fails with
// ErrShardFull.
func WithMaxShardBytes(n int) Option {
	return func(m *Manager) { m.maxShardBytes, m.budgetSet = n, true }
}

// WithMaxClockSkew sets how far apart the wall clocks of the processes serving the namespace
// may be (default DefaultMaxClockSkew; below MinTTL). A lease counts as live until its
// expires_at plus this, so a replica whose clock is ahead by less never hands a room over while
// the replica that granted it still counts it live. 0 suits a single server process.
func WithMaxClockSkew(d time.Duration) Option { return func(m *Manager) { m.skew = d } }

// WithMaxCASRetries sets how often one write retries after a conflicting write (default
// lease.DefaultMaxCASRetries).
func WithMaxCASRetries(n int) Option { return func(m *Manager) { m.maxCASRetries = n } }

// WithCountMaxAge sets how old the listing of the other shards may be when the active rooms are
// counted for an activation, on stores that cannot lock activations across processes (Swarm;
// default DefaultCountMaxAge). The Manager's own writes are always counted, so the limit stays
// exact within the process; activations by other processes are seen once the listing is
// renewed. 0 refreshes on every activation (one ServiceList of every shard, tens of
// milliseconds under the activation lock). Stores with an activation lock always refresh; a
// refresh reads only the shards whose version changed.
func WithCountMaxAge(d time.Duration) Option { return func(m *Manager) { m.countMaxAge = d } }

// WithClock replaces the system clock, for tests. Its wall clock decides expiry (the service's
// wall clock is the authority); its monotonic clock only ages the listing of WithCountMaxAge.
func WithClock(c lease.Clock) Option { return func(m *Manager) { m.clock = c } }

// validate checks the settings after all options were applied.
func (m *Manager) validate() error {
	var errs []error
	if m.store == nil {
		errs = append(errs, errors.New("rooms: a store is required"))
	}
	if err := lease.ValidateNamespace(m.ns); err != nil {
		errs = append(errs, fmt.Errorf("rooms: %w", err))
	}
	if m.shards < 1 || m.shards > MaxShards {
		errs = append(errs, fmt.Errorf("rooms: %d shards: use 1 to %d", m.shards, MaxShards))
	}
	if m.maxActive < 0 {
		errs = append(errs, fmt.Errorf("rooms: max active rooms %d must not be negative", m.maxActive))
	}
	if m.maxShardBytes < MinShardBytes || m.maxShardBytes > MaxShardBytes {
		errs = append(errs, fmt.Errorf("rooms: shard budget %d bytes: use %d to %d", m.maxShardBytes, MinShardBytes, MaxShardBytes))
	}
	// Below every TTL a room may have: the lease's rule (the timing module's) at the shortest.
	if err := timing.CheckClockSkew(MinTTL, m.skew); err != nil {
		errs = append(errs, fmt.Errorf("rooms: %w", err))
	}
	if m.countMaxAge < 0 {
		errs = append(errs, fmt.Errorf("rooms: count max age %v must not be negative", m.countMaxAge))
	}
	if m.maxCASRetries < 0 {
		errs = append(errs, fmt.Errorf("rooms: max CAS retries %d must not be negative", m.maxCASRetries))
	}
	if m.clock == nil {
		errs = append(errs, errors.New("rooms: the clock must not be nil"))
	}
	return errors.Join(errs...)
}
