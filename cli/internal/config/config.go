package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/settings"
)

// ListenOff as the listen setting disables the HTTP server of `run`.
const ListenOff = "off"

// StoreKind names a store.
type StoreKind string

// The stores.
const (
	StoreSwarm  StoreKind = "swarm"
	StoreFile   StoreKind = "file"
	StoreMemory StoreKind = "memory"
	StoreEtcd   StoreKind = "etcd"
)

// Config is the validated configuration.
type Config struct {
	// EnvPrefix is the variable prefix in force, e.g. "SWARM_LEASE".
	EnvPrefix string
	// Namespace is the election's name.
	Namespace string
	// Identity is this contender's identity.
	Identity lease.Identity
	// Store is the store kind; StoreDir its directory for the file store.
	Store    StoreKind
	StoreDir string
	// Etcd are the etcd store's options when Store is StoreEtcd: the URL's endpoints and
	// prefix, and the etcd_* settings (TLS files checked, credentials paired). They print
	// without the password (etcdstore.Options.String).
	Etcd etcdstore.Options
	// TTL, MaxCASRetries and MaxClockSkew configure the lease engine.
	TTL           time.Duration
	MaxCASRetries int
	MaxClockSkew  time.Duration
	// Listen is the HTTP listen address.
	Listen string
	// DefaultPoll is the watcher's poll interval.
	DefaultPoll time.Duration
	// KeepAlive is the SSE keep-alive interval.
	KeepAlive time.Duration
	// MaxConnections and MaxConnectionsPerClient bound the HTTP API's connections; 0 takes
	// the server's default (derived from the descriptor limit).
	MaxConnections, MaxConnectionsPerClient int
	// ShutdownTimeout is the child's grace period.
	ShutdownTimeout time.Duration
	// RenewInterval is the leader's renewal cadence; 0 means a third of the TTL.
	RenewInterval time.Duration
	// Task is the discovered Swarm task, when discovery ran and found one.
	Task *Task

	// Elections configures the elections API of serve.
	Elections Elections
	// Server and ElectionID name the remote elections server and room of `run --server`.
	Server     string
	ElectionID string
	// ChildCgroup: run puts its command in a cgroup of its own when it can.
	ChildCgroup bool
	// CORSAllowedOrigins are the origins whose browser pages may call the HTTP API.
	CORSAllowedOrigins []string

	values *settings.Values
}

// Source returns where key's value came from.
func (c *Config) Source(key string) Source {
	if c.values == nil { // a Config a test built
		return Source{}
	}
	return c.values.Source(key)
}

// Elections are the settings of the elections (rooms) API.
type Elections struct {
	Enabled   bool
	Namespace string
	// Shards is the rooms' shard count; 0 when not set, for the rooms engine's default on the
	// store (rooms.DefaultShards, on etcd rooms.DefaultShardsIndividual).
	Shards int
	// MaxActiveRooms bounds the rooms with a live lease (0: no limit); nil when not set, for
	// the rooms engine's default on the store (rooms.DefaultMaxActiveRooms, on a store that
	// keeps every room apart, etcd, rooms.DefaultMaxActiveRoomsIndividual).
	MaxActiveRooms     *int
	AdmissionPerMinute int
	MaxTrackedClients  int
	// TrustedProxies is the comma-separated list of proxies; the server parses it
	// (clientip.ParseTrustedProxies) where it is built.
	TrustedProxies      string
	MaxWatchesPerClient int
	MaxWatches          int
	WatchLifetime       time.Duration
}

// ErrDiscovery marks a namespace or identity that neither a setting nor the Swarm task gave.
var ErrDiscovery = errors.New("settings missing")

// RequireElection checks the settings that commands acting on an election need: a valid
// namespace and a holder ID.
func (c *Config) RequireElection() error {
	var errs []error
	if c.Namespace == "" {
		errs = append(errs, fmt.Errorf("no namespace: set %s or --%s (in a Swarm task it defaults to the service name)", EnvName(c.EnvPrefix, KeyNamespace), FlagName(KeyNamespace)))
	} else if err := lease.ValidateNamespace(c.Namespace); err != nil {
		errs = append(errs, fmt.Errorf("invalid %s (from %s): %w", KeyNamespace, c.Source(KeyNamespace), err))
	}
	if c.Identity.HolderID == "" {
		errs = append(errs, fmt.Errorf("no holder ID: set %s or --%s (in a Swarm task it defaults to the node ID)", EnvName(c.EnvPrefix, KeyHolderID), FlagName(KeyHolderID)))
	} else if len(c.Identity.HolderID) > 200 {
		errs = append(errs, fmt.Errorf("invalid %s (from %s): at most 200 characters", KeyHolderID, c.Source(KeyHolderID)))
	}
	return errors.Join(errs...)
}

// RequireRemote checks the settings of `run` through an elections server (server set): the
// room to contend for, a TTL the elections API accepts (whole seconds from 5 to 300) and a
// holder ID usable as a candidate id when one is set. The timing rule is the client's
// (swarmlease.NewContender).
func (c *Config) RequireRemote() error {
	var errs []error
	if c.ElectionID == "" {
		errs = append(errs, fmt.Errorf("no election: with %s set, name the room to contend for with %s or --%s (8 to 64 letters, digits, '_' or '-')",
			KeyServer, EnvName(c.EnvPrefix, KeyElectionID), FlagName(KeyElectionID)))
	} else if rooms.ValidateRoomID(c.ElectionID) != nil {
		errs = append(errs, fmt.Errorf("invalid %s %q (from %s): want 8 to 64 letters, digits, '_' or '-'", KeyElectionID, c.ElectionID, c.Source(KeyElectionID)))
	}
	if h := c.Identity.HolderID; h == "" {
		errs = append(errs, fmt.Errorf("no candidate id: with %s set, the holder ID is the candidate id, and the hostname is empty: set %s or --%s",
			KeyServer, EnvName(c.EnvPrefix, KeyHolderID), FlagName(KeyHolderID)))
	} else if rooms.ValidateCandidateID(h) != nil {
		errs = append(errs, fmt.Errorf("invalid %s %q (from %s): with %s, it is the candidate id: 1 to 64 letters, digits, '.', '_', ':', '@' or '-'",
			KeyHolderID, h, c.Source(KeyHolderID), KeyServer))
	}
	if c.TTL == 0 { // already reported as invalid
		return errors.Join(errs...)
	}
	if rooms.ValidateTTL(c.TTL) != nil {
		errs = append(errs, fmt.Errorf("invalid %s %d (from %s): with %s, the TTL must be whole seconds from %d to %d ms (the elections API's ttl_seconds)",
			KeyTTLMillis, c.TTL.Milliseconds(), c.Source(KeyTTLMillis), KeyServer, rooms.MinTTL.Milliseconds(), rooms.MaxTTL.Milliseconds()))
	}
	return errors.Join(errs...)
}
