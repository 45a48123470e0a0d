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

// Settings lists every setting in the order of docs/configuration.md's table. Help is the
// flag's help: short, since the variable and the default follow it; the page says the rest.
var Settings = []Setting{
	{Key: KeyNamespace, Help: "the election's name (default: the Swarm service's name)"},
	{Key: KeyHolderID, Help: "this contender's identity (default: the Swarm node ID, else the hostname)"},
	{Key: KeyNodeID, Help: "node metadata (default: the Swarm node ID)"},
	{Key: KeyTaskID, Help: "with the holder ID, the identity (default: the Swarm task ID)"},
	{Key: KeyStore, Default: "swarm", Help: "swarm, etcd://HOST:PORT[,…][/PREFIX], file:DIR (one host only) or memory"},
	{Key: KeyEtcdCAFile, Help: "PEM CA of the etcd members' certificates (turns TLS on)"},
	{Key: KeyEtcdCertFile, Help: "PEM client certificate for etcd, with --etcd-key-file (turns TLS on)"},
	{Key: KeyEtcdKeyFile, Help: "PEM private key of --etcd-cert-file"},
	{Key: KeyEtcdUsername, Help: "etcd user; its password only from the variable or its _FILE"},
	{Key: KeyEtcdPassword, Kind: settings.Secret, Help: "that etcd user's password: from the variable or its _FILE only, never a flag or a label"},
	{Key: KeyEtcdDialTimeoutMs, Kind: settings.Number, Default: defaultMillis(etcdstore.DefaultDialTimeout), Help: "bound on connecting to an etcd member, ms"},
	{Key: KeyEtcdRequestTimeoutMs, Kind: settings.Number, Default: defaultMillis(etcdstore.DefaultRequestTimeout), Help: "bound on one etcd request, ms"},
	{Key: KeyTTLMillis, Kind: settings.Number, Default: "30000", Help: "lease duration, ms (at least 500)"},
	{Key: KeyMaxCASRetries, Kind: settings.Number, Default: "8", Help: "conflicting writes retried within one operation"},
	{Key: KeyMaxClockSkewMs, Kind: settings.Number, Default: "1000", Help: "tolerated clock difference between hosts, ms (at most a tenth of the TTL unless set)"},
	{Key: KeyListen, Default: "0.0.0.0:8080", Help: "HTTP address, or off"},
	{Key: KeyDefaultPollMillis, Kind: settings.Number, Default: "1000", Help: "watcher poll interval, ms"},
	{Key: KeyKeepAliveMillis, Kind: settings.Number, Default: "15000", Help: "SSE keep-alive interval, ms"},
	{Key: KeyShutdownTimeoutMs, Kind: settings.Number, Default: "10000", Help: "the command's grace between SIGTERM and SIGKILL, ms"},
	{Key: KeyRenewIntervalMs, Kind: settings.Number, Help: "how often the leader renews, ms (default: a third of the TTL)"},
	{Key: KeyMaxConnections, Kind: settings.Number, Help: "open HTTP connections at most (default: from the descriptor limit)"},
	{Key: KeyMaxConnectionsPerClient, Kind: settings.Number, Help: "open HTTP connections per client (default: a quarter of the above)"},

	{Key: KeyElections, Default: "on", Help: "the elections API: on, or off to answer it 403"},
	{Key: KeyElectionsNamespace, Default: "lfp-elections", Help: "where the rooms live in the store; one per elections service"},
	{Key: KeyRoomShards, Kind: settings.Number, Help: "shards of the rooms, 1 to 256 (default: " +
		strconv.Itoa(rooms.DefaultShards) + ", on etcd " + strconv.Itoa(rooms.DefaultShardsIndividual) + ")"},
	{Key: KeyMaxActiveRooms, Kind: settings.Number, Help: "rooms with a live lease, 0 for no limit (default: " +
		strconv.Itoa(rooms.DefaultMaxActiveRooms) + ", on etcd " + strconv.Itoa(rooms.DefaultMaxActiveRoomsIndividual) + ")"},
	{Key: KeyAdmissionPerMinute, Kind: settings.Number, Default: "600", Help: "room creations and campaigns per client per minute, 0 for no limit"},
	{Key: KeyMaxTrackedClients, Kind: settings.Number, Default: "65536", Help: "clients whose admission budget is remembered"},
	{Key: KeyTrustedProxies, Help: "addresses or CIDRs whose X-Forwarded-For names the client, comma-separated"},
	{Key: KeyCORSAllowedOrigins, Help: "origins whose browser pages may call the API, comma-separated, or *"},
	{Key: KeyMaxWatchesPerClient, Kind: settings.Number, Default: "32", Help: "concurrent watch streams per client"},
	{Key: KeyMaxWatches, Kind: settings.Number, Default: "10000", Help: "concurrent watch streams in total"},
	{Key: KeyWatchLifetimeMs, Kind: settings.Number, Default: "900000", Help: "a watch stream ends after this, ms; clients reconnect"},

	{Key: KeyServer, Help: "base URL of an elections server, e.g. http://elect:8080"},
	{Key: KeyElectionID, Help: "the room to contend for: 8 to 64 of [A-Za-z0-9_-]"},

	{Key: KeyChildCgroup, Default: "auto", Help: "auto: the command gets a cgroup v2 of its own where one is writable; off"},
}

// defaultMillis is d as a setting's default in milliseconds.
func defaultMillis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
