package config

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/clientip"
	"github.com/regbo/lfp-swarm-lease/server/connlimit"
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

	sources map[string]Source
}

// Source returns where key's value came from.
func (c *Config) Source(key string) Source { return c.sources[key] }

// Task is the discovered Swarm task (see Loader.Discover).
type Task struct {
	ServiceName, NodeID, TaskID string
	// Labels are the container's labels.
	Labels map[string]string
}

// Elections are the settings of the elections (rooms) API.
type Elections struct {
	Enabled             bool
	Namespace           string
	Shards              int
	MaxActiveRooms      int
	AdmissionPerMinute  int
	MaxTrackedClients   int
	TrustedProxies      []netip.Prefix
	MaxWatchesPerClient int
	MaxWatches          int
	WatchLifetime       time.Duration
}

// ErrDiscovery wraps every failure to learn the namespace or identity from the Swarm task.
var ErrDiscovery = errors.New("config: Swarm discovery failed")

// Loader loads a Config. Zero fields fall back to the process's own environment and files.
type Loader struct {
	// EnvPrefix is the variable prefix ("" = DefaultEnvPrefix).
	EnvPrefix string
	// Flags holds the typed flags; only flags the user set count.
	Flags *pflag.FlagSet
	// Environ returns the environment (default os.Environ).
	Environ func() []string
	// Discover finds the current Swarm task; nil disables discovery. It is called only when
	// the store is swarm or the namespace or holder ID is missing.
	Discover func(ctx context.Context) (Task, error)
	// NoHolderID: the command never contends, so a missing holder ID needs no discovery.
	NoHolderID bool
	// NamespaceOptional: the command works without an election (serve without a namespace
	// serves only the elections API), so failed discovery is not an error.
	NamespaceOptional bool
	// StoreDefault replaces the store setting's default (serve: the embedded file store).
	StoreDefault string
	// Remote: the command contends through an elections server when the server setting is
	// set (run); then it needs no Docker access, and discovery never runs.
	Remote bool
	// Hostname, when set, is the holder ID's default outside a Swarm task (no discovered node
	// ID and none configured), so that a missing holder ID is never a reason to discover; nil
	// keeps discovery the only source. A remote run (server set) names its candidate itself.
	Hostname func() string
	// Warn receives warnings that do not stop the command, such as an unknown variable under
	// the prefix (nil: dropped).
	Warn func(string)
}

// FlagName returns the flag of a key.
func FlagName(key string) string { return strings.ReplaceAll(key, "_", "-") }

// EnvName returns the variable of a key under prefix.
func EnvName(prefix, key string) string { return prefix + "_" + strings.ToUpper(key) }

// LabelName returns the container label of a key under prefix, e.g. swarm-lease.ttl_ms.
func LabelName(prefix, key string) string {
	return strings.ReplaceAll(strings.ToLower(prefix), "_", "-") + "." + key
}

// RegisterFlags adds one flag per setting to fs. Defaults are not set on the flags: a flag
// counts only when given, so that lower layers can still apply.
func RegisterFlags(fs *pflag.FlagSet, keys ...string) {
	for _, s := range Settings {
		if len(keys) > 0 && !slices.Contains(keys, s.Key) {
			continue
		}
		help := s.Help
		if s.Default != "" {
			help += " (default " + s.Default + ")"
		}
		if wholeNumbers[s.Key] {
			fs.Int64(FlagName(s.Key), 0, help)
			continue
		}
		fs.String(FlagName(s.Key), "", help)
	}
}

// Load reads every layer, validates the result, and reports the first problems found, each
// naming the setting and where its value came from.
func (l Loader) Load(ctx context.Context) (*Config, error) {
	prefix := l.EnvPrefix
	if prefix == "" {
		prefix = DefaultEnvPrefix
	}
	if !validPrefix(prefix) {
		return nil, fmt.Errorf("invalid --env-prefix %q: use letters, digits and '_', starting with a letter", prefix)
	}
	environ := l.Environ
	if environ == nil {
		environ = os.Environ
	}

	defaults := newLayer()
	for _, s := range Settings {
		if s.Default != "" {
			defaults.set(s.Key, s.Default, Source{Kind: FromDefault})
		}
	}
	if l.StoreDefault != "" {
		defaults.set(KeyStore, l.StoreDefault, Source{Kind: FromDefault})
	}
	if l.Warn != nil {
		for _, w := range UnknownVariables(prefix, environ()) {
			l.Warn(w)
		}
	}
	envLayer, err := loadEnv(prefix, environ)
	if err != nil {
		return nil, err
	}
	flagLayer, err := loadFlags(l.Flags)
	if err != nil {
		return nil, err
	}

	// Discovery only when it can matter: the Swarm store wants task metadata anyway, and any
	// store needs a namespace and a holder ID.
	upper := koanf.New(".")
	for _, layer := range []layer{defaults, envLayer, flagLayer} {
		_ = upper.Load(confmap.Provider(layer.values, "."), nil)
	}
	var task *Task
	labelLayer := newLayer()
	needNamespace := upper.String(KeyNamespace) == ""
	// Without a hostname default, a missing holder ID can only come from the task.
	needHolder := !l.NoHolderID && upper.String(KeyHolderID) == "" && l.Hostname == nil
	remote := l.Remote && upper.String(KeyServer) != ""
	if l.Discover != nil && !remote && (upper.String(KeyStore) == string(StoreSwarm) || needNamespace || needHolder) {
		t, err := l.Discover(ctx)
		switch {
		case err == nil:
			task = &t
			labelLayer = loadLabels(prefix, t)
		case needHolder && !l.NamespaceOptional:
			return nil, fmt.Errorf("%w: %w\nthe namespace and holder ID come from the Swarm task only when the Docker socket is mounted and the container hostname is Docker's default; otherwise set %s and %s (flags --%s, --%s)",
				ErrDiscovery, err, EnvName(prefix, KeyNamespace), EnvName(prefix, KeyHolderID), FlagName(KeyNamespace), FlagName(KeyHolderID))
		case needNamespace && !l.NamespaceOptional:
			return nil, fmt.Errorf("%w: %w\nthe namespace comes from the Swarm task only when the Docker socket is mounted and the container hostname is Docker's default; otherwise set %s or --%s",
				ErrDiscovery, err, EnvName(prefix, KeyNamespace), FlagName(KeyNamespace))
		}
	}
	if l.Hostname != nil && !l.NoHolderID && !remote {
		// Below every other layer: a task's node ID, a variable or a flag wins.
		if h := l.Hostname(); h != "" {
			defaults.set(KeyHolderID, h, Source{Kind: FromDefault, Name: "the hostname"})
		}
	}

	// Every layer gives typed values; a value that is not a whole number is dropped with an
	// error, so that it is reported once, with its source.
	var errs []error
	k, sources := koanf.New("."), map[string]Source{}
	for _, layer := range []layer{defaults, labelLayer, envLayer, flagLayer} {
		errs = append(errs, layer.typed())
		if err := k.Load(confmap.Provider(layer.values, "."), nil); err != nil {
			return nil, err
		}
		maps.Copy(sources, layer.sources)
	}
	c, err := build(prefix, k, sources, task)
	return c, errors.Join(append(errs, err)...)
}

func build(prefix string, k *koanf.Koanf, sources map[string]Source, task *Task) (*Config, error) {
	c := &Config{EnvPrefix: prefix, Task: task, sources: sources}
	var errs []error
	bad := func(key, want string) {
		errs = append(errs, fmt.Errorf("invalid %s %q (from %s): %s", key, k.String(key), sources[key], want))
	}
	millis := func(key string, minimum time.Duration) time.Duration {
		n := k.Int64(key)
		if time.Duration(n)*time.Millisecond < minimum || n > int64(24*time.Hour/time.Millisecond) {
			bad(key, fmt.Sprintf("want a whole number of milliseconds from %d to %d", minimum.Milliseconds(), int64(24*time.Hour/time.Millisecond)))
			return 0
		}
		return time.Duration(n) * time.Millisecond
	}

	c.Namespace = k.String(KeyNamespace)
	c.Identity = lease.Identity{HolderID: k.String(KeyHolderID), NodeID: k.String(KeyNodeID), TaskID: k.String(KeyTaskID)}
	if c.Identity.NodeID == "" && sources[KeyHolderID].Kind == FromLabel {
		c.Identity.NodeID = c.Identity.HolderID
	}
	c.TTL = millis(KeyTTLMillis, lease.MinTTL)
	c.MaxClockSkew = millis(KeyMaxClockSkewMs, 0)
	c.DefaultPoll = millis(KeyDefaultPollMillis, 10*time.Millisecond)
	c.KeepAlive = millis(KeyKeepAliveMillis, 100*time.Millisecond)
	c.MaxConnections, c.MaxConnectionsPerClient = connectionLimit(k, KeyMaxConnections, bad), connectionLimit(k, KeyMaxConnectionsPerClient, bad)
	if err := connlimit.CheckLimits(c.MaxConnections, c.MaxConnectionsPerClient); err != nil {
		bad(KeyMaxConnectionsPerClient, fmt.Sprintf("must not exceed %s (%d)", KeyMaxConnections, c.MaxConnections))
	}
	c.ShutdownTimeout = millis(KeyShutdownTimeoutMs, 0)
	if k.Exists(KeyRenewIntervalMs) {
		c.RenewInterval = millis(KeyRenewIntervalMs, 10*time.Millisecond)
	}
	if sources[KeyMaxClockSkewMs].Kind == FromDefault && c.TTL > 0 {
		// The default allowance scales down with short TTLs, so that a TTL of 1 s works
		// without touching the skew.
		c.MaxClockSkew = lease.DefaultMaxClockSkewFor(c.TTL)
	}
	if c.TTL > 0 && lease.CheckClockSkew(c.TTL, c.MaxClockSkew) != nil {
		bad(KeyMaxClockSkewMs, fmt.Sprintf("must be below the TTL (%s = %d): set %s below %d, or leave it unset (default: %d, at most a tenth of the TTL), or raise %s",
			KeyTTLMillis, c.TTL.Milliseconds(), KeyMaxClockSkewMs, c.TTL.Milliseconds(), lease.DefaultMaxClockSkew.Milliseconds(), KeyTTLMillis))
	}
	n := k.Int64(KeyMaxCASRetries)
	if n < 0 || n > 1000 {
		bad(KeyMaxCASRetries, "want a whole number from 0 to 1000")
	}
	c.MaxCASRetries = int(n)

	c.Listen = k.String(KeyListen)
	if _, port, err := net.SplitHostPort(c.Listen); c.Listen != ListenOff && (err != nil || port == "") {
		bad(KeyListen, "want host:port, e.g. 0.0.0.0:8080 or 127.0.0.1:9000, or off")
	}

	c.Elections = buildElections(k, bad)
	c.Server, c.ElectionID = strings.TrimRight(k.String(KeyServer), "/"), k.String(KeyElectionID)
	if c.Server != "" {
		if u, err := url.Parse(c.Server); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			bad(KeyServer, "want an http:// or https:// base URL without credentials, e.g. http://elections:8080")
		}
	}

	origins, err := parseOrigins(k.String(KeyCORSAllowedOrigins))
	if err != nil {
		bad(KeyCORSAllowedOrigins, err.Error())
	}
	c.CORSAllowedOrigins = origins

	switch k.String(KeyChildCgroup) {
	case "auto":
		c.ChildCgroup = true
	case "off":
	default:
		bad(KeyChildCgroup, "want auto or off")
	}

	if kind, dir, err := ParseStore(k.String(KeyStore)); err != nil {
		bad(KeyStore, err.Error())
	} else {
		c.Store, c.StoreDir = kind, dir
	}
	return c, errors.Join(errs...)
}

// RequireElection checks the settings that commands acting on an election need: a valid
// namespace and a holder ID.
func (c *Config) RequireElection() error {
	var errs []error
	if c.Namespace == "" {
		errs = append(errs, fmt.Errorf("no namespace: set %s or --%s (in a Swarm task it defaults to the service name)", EnvName(c.EnvPrefix, KeyNamespace), FlagName(KeyNamespace)))
	} else if err := lease.ValidateNamespace(c.Namespace); err != nil {
		errs = append(errs, fmt.Errorf("invalid %s (from %s): %w", KeyNamespace, c.sources[KeyNamespace], err))
	}
	if c.Identity.HolderID == "" {
		errs = append(errs, fmt.Errorf("no holder ID: set %s or --%s (in a Swarm task it defaults to the node ID)", EnvName(c.EnvPrefix, KeyHolderID), FlagName(KeyHolderID)))
	} else if len(c.Identity.HolderID) > 200 {
		errs = append(errs, fmt.Errorf("invalid %s (from %s): at most 200 characters", KeyHolderID, c.sources[KeyHolderID]))
	}
	return errors.Join(errs...)
}

// RequireRemote checks the settings of `run` through an elections server (server set): the
// room to contend for, a TTL the elections API accepts (whole seconds from 5 to 300) and a
// holder ID usable as a candidate id when one is set. The timing rule is the client's
// (swarmlease.NewHolder).
func (c *Config) RequireRemote() error {
	var errs []error
	if c.ElectionID == "" {
		errs = append(errs, fmt.Errorf("no election: with %s set, name the room to contend for with %s or --%s (8 to 64 letters, digits, '_' or '-')",
			KeyServer, EnvName(c.EnvPrefix, KeyElectionID), FlagName(KeyElectionID)))
	} else if rooms.ValidateRoomID(c.ElectionID) != nil {
		errs = append(errs, fmt.Errorf("invalid %s %q (from %s): want 8 to 64 letters, digits, '_' or '-'", KeyElectionID, c.ElectionID, c.sources[KeyElectionID]))
	}
	if h := c.Identity.HolderID; h != "" && rooms.ValidateCandidateID(h) != nil {
		errs = append(errs, fmt.Errorf("invalid %s %q (from %s): with %s, it is the candidate id: 1 to 64 letters, digits, '.', '_', ':', '@' or '-'",
			KeyHolderID, h, c.sources[KeyHolderID], KeyServer))
	}
	if c.TTL == 0 { // already reported as invalid
		return errors.Join(errs...)
	}
	if rooms.ValidateTTL(c.TTL) != nil {
		errs = append(errs, fmt.Errorf("invalid %s %d (from %s): with %s, the TTL must be whole seconds from %d to %d ms (the elections API's ttl_seconds)",
			KeyTTLMillis, c.TTL.Milliseconds(), c.sources[KeyTTLMillis], KeyServer, rooms.MinTTL.Milliseconds(), rooms.MaxTTL.Milliseconds()))
	}
	return errors.Join(errs...)
}

func validPrefix(p string) bool {
	for i, r := range p {
		switch {
		case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case (r >= '0' && r <= '9' || r == '_') && i > 0:
		default:
			return false
		}
	}
	return p != ""
}

// connectionLimit reads an optional connection limit: unset is 0 (the server's default).
func connectionLimit(k *koanf.Koanf, key string, bad func(key, want string)) int {
	if !k.Exists(key) {
		return 0
	}
	n := k.Int64(key)
	if n < 1 || n > 10_000_000 {
		bad(key, "want a whole number from 1 to 10000000, or nothing for the default derived from the descriptor limit (ulimit -n)")
		return 0
	}
	return int(n)
}

// buildElections reads the elections API's settings.
func buildElections(k *koanf.Koanf, bad func(key, want string)) Elections {
	whole := func(key string, lo, hi int) int {
		n := k.Int64(key)
		if n < int64(lo) || n > int64(hi) {
			bad(key, fmt.Sprintf("want a whole number from %d to %d", lo, hi))
		}
		return int(n)
	}
	e := Elections{Namespace: k.String(KeyElectionsNamespace)}
	switch k.String(KeyElections) {
	case "on":
		e.Enabled = true
	case "off":
	default:
		bad(KeyElections, "want on or off")
	}
	if err := lease.ValidateNamespace(e.Namespace); err != nil {
		bad(KeyElectionsNamespace, err.Error())
	}
	e.Shards = whole(KeyRoomShards, 1, rooms.MaxShards)
	e.MaxActiveRooms = whole(KeyMaxActiveRooms, 0, 10_000_000)
	e.AdmissionPerMinute = whole(KeyAdmissionPerMinute, 0, 1_000_000)
	e.MaxTrackedClients = whole(KeyMaxTrackedClients, 1, 10_000_000)
	e.MaxWatchesPerClient = whole(KeyMaxWatchesPerClient, 1, 1_000_000)
	e.MaxWatches = whole(KeyMaxWatches, 1, 1_000_000)
	lifetime := whole(KeyWatchLifetimeMs, 1000, 24*3600*1000)
	e.WatchLifetime = time.Duration(lifetime) * time.Millisecond
	proxies, err := clientip.ParseTrustedProxies(k.String(KeyTrustedProxies))
	if err != nil {
		bad(KeyTrustedProxies, err.Error()+"; separate several with commas")
	}
	e.TrustedProxies = proxies
	return e
}

// parseOrigins reads a comma-separated list of origins: scheme://host[:port] of http or https,
// without a path, or * for any.
func parseOrigins(list string) ([]string, error) {
	var origins []string
	for _, o := range strings.Split(list, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		if o != "*" {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
				return nil, fmt.Errorf("%q is not an origin: want scheme://host[:port] such as https://dashboard.example.com (no path), or *; separate several with commas", o)
			}
			o = u.Scheme + "://" + u.Host
		}
		origins = append(origins, o)
	}
	return origins, nil
}
