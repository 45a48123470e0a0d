package elections

import (
	"cmp"
	"errors"
	"log/slog"
	"net/netip"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/admission"
	"github.com/regbo/lfp-swarm-lease/server/roomwatch"
)

// Options configure the elections ("rooms") API: the wire contract of docs/elections-api.md on
// top of a rooms.Manager. Zero limits take the defaults below.
type Options struct {
	// Rooms runs the rooms (required).
	Rooms *rooms.Manager
	// Disabled answers every elections endpoint with 403 forbidden.
	Disabled bool
	// AdmissionPerMinute is each client's budget of room creations and campaigns per minute
	// (default DefaultAdmissionPerMinute; negative: unlimited). Status, renew and resign are
	// exempt, so that load can never strand a current leader.
	AdmissionPerMinute int
	// MaxTrackedClients bounds the table of clients with a budget (default
	// DefaultMaxTrackedClients).
	MaxTrackedClients int
	// TrustedProxies are the peers whose X-Forwarded-For header names the client; every other
	// peer is the client itself (see clientip.ParseTrustedProxies).
	TrustedProxies []netip.Prefix
	// MaxWatchesPerClient and MaxWatches bound concurrent watch streams per client and in
	// total (defaults DefaultMaxWatchesPerClient, DefaultMaxWatches).
	MaxWatchesPerClient int
	MaxWatches          int
	// WatchLifetime ends a watch stream after this long (default DefaultWatchLifetime); the
	// client reconnects.
	WatchLifetime time.Duration
}

// Defaults of the elections API's limits (the seed service's where it has one).
const (
	DefaultAdmissionPerMinute  = 600
	DefaultMaxTrackedClients   = 65_536
	DefaultMaxWatchesPerClient = 32
	DefaultMaxWatches          = 10_000
	DefaultWatchLifetime       = 900 * time.Second
)

func (o *Options) applyDefaults() error {
	if o.Rooms == nil {
		return errors.New("elections: the API needs a rooms manager")
	}
	o.AdmissionPerMinute = cmp.Or(o.AdmissionPerMinute, DefaultAdmissionPerMinute)
	if o.MaxTrackedClients <= 0 {
		o.MaxTrackedClients = DefaultMaxTrackedClients
	}
	if o.MaxWatchesPerClient <= 0 {
		o.MaxWatchesPerClient = DefaultMaxWatchesPerClient
	}
	if o.MaxWatches <= 0 {
		o.MaxWatches = DefaultMaxWatches
	}
	if o.WatchLifetime <= 0 {
		o.WatchLifetime = DefaultWatchLifetime
	}
	return nil
}

// Host is what the API takes from the server that serves it.
type Host struct {
	// MaxBodyBytes is the server's bound on request bodies.
	MaxBodyBytes int64
	// PollInterval is how often the watch streams' rooms are read without a change
	// notification.
	PollInterval time.Duration
	// KeepAlive is the SSE keep-alive interval.
	KeepAlive time.Duration
	// Closing is closed when the server shuts down: the watch streams end.
	Closing <-chan struct{}
	// Metrics receives the API's measurements.
	Metrics Metrics
	// Logger logs failed requests and reads.
	Logger *slog.Logger
}

// Metrics is what the API records.
type Metrics interface {
	roomwatch.Metrics
	// ElectionRequest counts one request by operation and outcome (ok, leader, follower, or
	// the error code).
	ElectionRequest(op, outcome string)
}

// API serves the elections API: its huma operations, its watch stream, and the fast path
// (ServeFast) that answers the hot operations ahead of the router.
type API struct {
	opts Options
	// fastBodyMax bounds the bodies the fast path reads: the constant FastBodyMax, or the
	// server's body limit where that is lower.
	fastBodyMax int64
	admission   *admission.Budget
	watches     *roomwatch.Watches
	metrics     Metrics
	log         *slog.Logger
	keepAlive   time.Duration
	closing     <-chan struct{}
}
