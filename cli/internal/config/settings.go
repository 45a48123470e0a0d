// Package config loads the settings of lfp-swarm-lease from four layers — typed flags, then
// environment variables (each also readable from a file named by its _FILE variant), then the
// labels of the current Swarm task's container, then defaults — and remembers where each value
// came from, so that an invalid value is reported with its origin.
package config

// Setting describes one configuration key.
type Setting struct {
	// Key is the canonical name: the flag is Key with '_' → '-', the variable PREFIX_ + upper(Key),
	// the container label lower(prefix).Key.
	Key string
	// Default is the value used when no layer sets the key ("" for none).
	Default string
	// Help is the one-line description for flags and the README table.
	Help string
}

// Keys of the settings.
const (
	KeyNamespace         = "namespace"
	KeyHolderID          = "holder_id"
	KeyNodeID            = "node_id"
	KeyTaskID            = "task_id"
	KeyStore             = "store"
	KeyTTLMillis         = "ttl_ms"
	KeyMaxCASRetries     = "max_cas_retries"
	KeyMaxClockSkewMs    = "max_clock_skew_ms"
	KeyListen            = "listen"
	KeyDefaultPollMillis = "default_poll_ms"
	KeyKeepAliveMillis   = "keep_alive_ms"
	KeyShutdownTimeoutMs = "shutdown_timeout_ms"
	KeyRenewIntervalMs   = "renew_interval_ms"
)

// DefaultEnvPrefix is the prefix of every variable unless --env-prefix changes it.
const DefaultEnvPrefix = "SWARM_LEASE"

// Settings lists every setting in the order of the README's table.
var Settings = []Setting{
	{KeyNamespace, "", "election name; default: the current Swarm service name"},
	{KeyHolderID, "", "holder identity; default: the current Swarm node ID"},
	{KeyNodeID, "", "node metadata; default: the current Swarm node ID"},
	{KeyTaskID, "", "task identity; default: the current Swarm task ID (empty outside Swarm)"},
	{KeyStore, "swarm", "where the election lives: swarm, file://<dir> (one host only) or memory"},
	{KeyTTLMillis, "30000", "lease duration in milliseconds (at least 500)"},
	{KeyMaxCASRetries, "8", "conflicting writes retried within one operation"},
	{KeyMaxClockSkewMs, "1000", "tolerated wall-clock difference between hosts, in milliseconds (below the TTL)"},
	{KeyListen, "0.0.0.0:8080", "HTTP listen address (run, serve); off disables it for run"},
	{KeyDefaultPollMillis, "1000", "watcher poll interval in milliseconds"},
	{KeyKeepAliveMillis, "15000", "SSE keep-alive interval in milliseconds"},
	{KeyShutdownTimeoutMs, "10000", "grace period for the child between SIGTERM and SIGKILL, in milliseconds"},
	{KeyRenewIntervalMs, "", "how often the leader renews, in milliseconds (default: a third of the TTL)"},
}
