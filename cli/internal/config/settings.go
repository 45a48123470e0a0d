// Package config loads the settings of lfp-swarm-lease from four layers — typed flags, then
// environment variables (each also readable from a file named by its _FILE variant), then the
// labels of the current Swarm task's container, then defaults — with the settings kernel (the
// settings module), which remembers where each value came from, so that an invalid value is
// reported with its origin. What is the CLI's own is here: its table of settings, Swarm
// discovery, and the checks of the values.
package config

import (
	"strconv"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/etcdstore"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/settings"
)

// Setting describes one setting: the flag is Key with '_' → '-', the variable PREFIX_ +
// upper(Key), the container label lower(prefix).Key; a Number is a whole number, whose flag is an
// int64. A Secret has neither flag nor label: only its variable or its _FILE variable set it.
type Setting = settings.Setting

// Keys of the settings.
const (
	KeyNamespace = "namespace"
	KeyHolderID  = "holder_id"
	KeyNodeID    = "node_id"
	KeyTaskID    = "task_id"
	KeyStore     = "store"

	KeyEtcdCAFile           = "etcd_ca_file"
	KeyEtcdCertFile         = "etcd_cert_file"
	KeyEtcdKeyFile          = "etcd_key_file"
	KeyEtcdUsername         = "etcd_username"
	KeyEtcdPassword         = "etcd_password"
	KeyEtcdDialTimeoutMs    = "etcd_dial_timeout_ms"
	KeyEtcdRequestTimeoutMs = "etcd_request_timeout_ms"

	KeyTTLMillis         = "ttl_ms"
	KeyMaxCASRetries     = "max_cas_retries"
	KeyMaxClockSkewMs    = "max_clock_skew_ms"
	KeyListen            = "listen"
	KeyDefaultPollMillis = "default_poll_ms"
	KeyKeepAliveMillis   = "keep_alive_ms"
	KeyShutdownTimeoutMs = "shutdown_timeout_ms"
	KeyRenewIntervalMs   = "renew_interval_ms"

	KeyMaxConnections          = "max_connections"
	KeyMaxConnectionsPerClient = "max_connections_per_client"

	KeyElections           = "elections"
	KeyElectionsNamespace  = "elections_namespace"
	KeyRoomShards          = "room_shards"
	KeyMaxActiveRooms      = "max_active_rooms"
	KeyAdmissionPerMinute  = "admission_per_minute"
	KeyMaxTrackedClients   = "max_tracked_clients"
	KeyTrustedProxies      = "trusted_proxies"
	KeyCORSAllowedOrigins  = "cors_allowed_origins"
	KeyMaxWatchesPerClient = "max_watches_per_client"
	KeyMaxWatches          = "max_watches"
	KeyWatchLifetimeMs     = "watch_lifetime_ms"

	KeyServer     = "server"
	KeyElectionID = "election"

	KeyChildCgroup = "child_cgroup"
)

// DefaultEnvPrefix is the prefix of every variable unless --env-prefix changes it.
const DefaultEnvPrefix = "SWARM_LEASE"

// reservedVariables are the names under the prefix that are not settings and draw no warning:
// FENCE is what run exports to its command (with HOLDER_ID, NODE_ID, TASK_ID and NAMESPACE,
// which are settings), so a command that is itself lfp-swarm-lease sees it; TEST_* is reserved
// for test suites (e.g. SWARM_LEASE_TEST_DOCKER_HOST).
var reservedVariables = []string{"FENCE", "TEST_*"}

// schema is the settings kernel's view of the settings under prefix.
func schema(prefix string) *settings.Schema {
	return &settings.Schema{Prefix: prefix, Settings: Settings, Reserved: reservedVariables}
}

// Settings lists every setting in the order of the README's table.
var Settings = []Setting{
	{Key: KeyNamespace, Help: "election name; default: the current Swarm service name"},
	{Key: KeyHolderID, Help: "holder identity; default: the current Swarm node ID, outside a Swarm task the hostname"},
	{Key: KeyNodeID, Help: "node metadata; default: the current Swarm node ID"},
	{Key: KeyTaskID, Help: "task identity; default: the current Swarm task ID (empty outside Swarm)"},
	{Key: KeyStore, Default: "swarm", Help: "where elections and rooms live: swarm, etcd://HOST:PORT[,HOST:PORT…][/PREFIX] (an etcd v3 cluster), file:///abs/dir, or file:rel/dir or file://./rel/dir relative to the working directory (one host only), or memory; serve defaults to file:// in its data directory"},
	{Key: KeyEtcdCAFile, Help: "PEM file of the CA that signed the etcd members' certificates; set, the etcd store speaks TLS"},
	{Key: KeyEtcdCertFile, Help: "PEM client certificate for etcd, with etcd_key_file (clusters that authenticate clients by certificate); turns TLS on"},
	{Key: KeyEtcdKeyFile, Help: "PEM private key of etcd_cert_file"},
	{Key: KeyEtcdUsername, Help: "etcd user, with etcd_password"},
	{Key: KeyEtcdPassword, Kind: settings.Secret, Help: "that etcd user's password: from the variable or its _FILE only, never a flag or a label"},
	{Key: KeyEtcdDialTimeoutMs, Kind: settings.Number, Default: defaultMillis(etcdstore.DefaultDialTimeout), Help: "bound on connecting to an etcd member, in milliseconds"},
	{Key: KeyEtcdRequestTimeoutMs, Kind: settings.Number, Default: defaultMillis(etcdstore.DefaultRequestTimeout), Help: "bound on one etcd request, in milliseconds; a write cut short is settled by reading it back"},
	{Key: KeyTTLMillis, Kind: settings.Number, Default: "30000", Help: "lease duration in milliseconds (at least 500)"},
	{Key: KeyMaxCASRetries, Kind: settings.Number, Default: "8", Help: "conflicting writes retried within one operation"},
	{Key: KeyMaxClockSkewMs, Kind: settings.Number, Default: "1000", Help: "tolerated wall-clock difference between hosts, in milliseconds (below the TTL; unset, at most a tenth of the TTL)"},
	{Key: KeyListen, Default: "0.0.0.0:8080", Help: "HTTP listen address (run, serve); off disables it for run"},
	{Key: KeyDefaultPollMillis, Kind: settings.Number, Default: "1000", Help: "watcher poll interval in milliseconds"},
	{Key: KeyKeepAliveMillis, Kind: settings.Number, Default: "15000", Help: "SSE keep-alive interval in milliseconds"},
	{Key: KeyShutdownTimeoutMs, Kind: settings.Number, Default: "10000", Help: "grace period for the child between SIGTERM and SIGKILL, in milliseconds"},
	{Key: KeyRenewIntervalMs, Kind: settings.Number, Help: "how often the leader renews, in milliseconds (default: a third of the TTL)"},
	{Key: KeyMaxConnections, Kind: settings.Number, Help: "open HTTP connections at most; at the limit a waiting one is closed to admit a new one (default: the descriptor limit less a reserve for the store)"},
	{Key: KeyMaxConnectionsPerClient, Kind: settings.Number, Help: "open HTTP connections per client address at most (default: a quarter of max_connections)"},

	{Key: KeyElections, Default: "on", Help: "serve the elections (rooms) API: on, or off to answer every elections endpoint 403 (serve)"},
	{Key: KeyElectionsNamespace, Default: "lfp-elections", Help: "where the rooms live in the store; every server of one elections service uses the same (serve)"},
	{Key: KeyRoomShards, Kind: settings.Number, Help: "shards the rooms are spread over, 1 to 256; the same on every server of the namespace (default: the store's, " +
		strconv.Itoa(rooms.DefaultShards) + ", on etcd " + strconv.Itoa(rooms.DefaultShardsIndividual) + ") (serve)"},
	{Key: KeyMaxActiveRooms, Kind: settings.Number, Help: "rooms with a live lease at once; 0 for no limit (default: the store's, " +
		strconv.Itoa(rooms.DefaultMaxActiveRooms) + ", on etcd " + strconv.Itoa(rooms.DefaultMaxActiveRoomsIndividual) + ") (serve)"},
	{Key: KeyAdmissionPerMinute, Kind: settings.Number, Default: "600", Help: "room creations and campaigns per minute per client; 0 for no limit (serve)"},
	{Key: KeyMaxTrackedClients, Kind: settings.Number, Default: "65536", Help: "clients whose admission budget is remembered; the least recently seen is forgotten first (serve)"},
	{Key: KeyTrustedProxies, Help: "comma-separated addresses or CIDR prefixes of proxies whose X-Forwarded-For names the client (serve)"},
	{Key: KeyCORSAllowedOrigins, Help: "comma-separated origins (scheme://host[:port], or * for any) whose browser pages may call the HTTP API, SSE included; empty: no CORS headers (run, serve)"},
	{Key: KeyMaxWatchesPerClient, Kind: settings.Number, Default: "32", Help: "concurrent elections watch streams per client (serve)"},
	{Key: KeyMaxWatches, Kind: settings.Number, Default: "10000", Help: "concurrent elections watch streams in total (serve)"},
	{Key: KeyWatchLifetimeMs, Kind: settings.Number, Default: "900000", Help: "an elections watch stream ends after this many milliseconds; clients reconnect (serve)"},

	{Key: KeyServer, Help: "base URL of an elections server to contend through instead of Swarm, e.g. http://elect:8080 (run)"},
	{Key: KeyElectionID, Help: "the room to contend for on the elections server: 8 to 64 of [A-Za-z0-9_-] (run)"},

	{Key: KeyChildCgroup, Default: "auto", Help: "auto: run the command in a cgroup v2 of its own where one is writable, so that all it starts dies with it; off: process group and subreaper only (run)"},
}

// defaultMillis is d as a setting's default in milliseconds.
func defaultMillis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
