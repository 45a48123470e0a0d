package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/settings"
)

// options are the settings as the kernel decodes them (settings.Values.Unmarshal), typed by
// kind, before their ranges and formats are checked. A pointer stays nil when no layer set its
// setting, which has no default.
type options struct {
	Namespace string `koanf:"namespace"`
	HolderID  string `koanf:"holder_id"`
	NodeID    string `koanf:"node_id"`
	TaskID    string `koanf:"task_id"`
	Store     string `koanf:"store"`

	EtcdCAFile           string `koanf:"etcd_ca_file"`
	EtcdCertFile         string `koanf:"etcd_cert_file"`
	EtcdKeyFile          string `koanf:"etcd_key_file"`
	EtcdUsername         string `koanf:"etcd_username"`
	EtcdPassword         string `koanf:"etcd_password"`
	EtcdDialTimeoutMs    int64  `koanf:"etcd_dial_timeout_ms"`
	EtcdRequestTimeoutMs int64  `koanf:"etcd_request_timeout_ms"`

	TTLMs             int64  `koanf:"ttl_ms"`
	MaxCASRetries     int64  `koanf:"max_cas_retries"`
	MaxClockSkewMs    int64  `koanf:"max_clock_skew_ms"`
	Listen            string `koanf:"listen"`
	DefaultPollMs     int64  `koanf:"default_poll_ms"`
	KeepAliveMs       int64  `koanf:"keep_alive_ms"`
	ShutdownTimeoutMs int64  `koanf:"shutdown_timeout_ms"`
	RenewIntervalMs   *int64 `koanf:"renew_interval_ms"`

	MaxConnections          *int64 `koanf:"max_connections"`
	MaxConnectionsPerClient *int64 `koanf:"max_connections_per_client"`

	Elections           string `koanf:"elections"`
	ElectionsNamespace  string `koanf:"elections_namespace"`
	RoomShards          *int64 `koanf:"room_shards"`
	MaxActiveRooms      *int64 `koanf:"max_active_rooms"`
	AdmissionPerMinute  int64  `koanf:"admission_per_minute"`
	MaxTrackedClients   int64  `koanf:"max_tracked_clients"`
	TrustedProxies      string `koanf:"trusted_proxies"`
	CORSAllowedOrigins  string `koanf:"cors_allowed_origins"`
	MaxWatchesPerClient int64  `koanf:"max_watches_per_client"`
	MaxWatches          int64  `koanf:"max_watches"`
	WatchLifetimeMs     int64  `koanf:"watch_lifetime_ms"`

	Server      string `koanf:"server"`
	ElectionID  string `koanf:"election"`
	ChildCgroup string `koanf:"child_cgroup"`
}

// build checks the merged values and makes the Config, naming every setting out of range or
// format with its value and source.
func build(prefix string, values *settings.Values, task *Task) (*Config, error) {
	c := &Config{EnvPrefix: prefix, Task: task, values: values}
	var o options
	if err := values.Unmarshal(&o); err != nil {
		return c, err
	}
	var errs []error
	bad := func(key, want string) {
		errs = append(errs, fmt.Errorf("invalid %s %q (from %s): %s", key, values.Text(key), c.Source(key), want))
	}
	millis := func(key string, n int64, minimum time.Duration) time.Duration {
		if time.Duration(n)*time.Millisecond < minimum || n > int64(24*time.Hour/time.Millisecond) {
			bad(key, fmt.Sprintf("want a whole number of milliseconds from %d to %d", minimum.Milliseconds(), int64(24*time.Hour/time.Millisecond)))
			return 0
		}
		return time.Duration(n) * time.Millisecond
	}

	c.Namespace = o.Namespace
	c.Identity = lease.Identity{HolderID: o.HolderID, NodeID: o.NodeID, TaskID: o.TaskID}
	if c.Identity.NodeID == "" && c.Source(KeyHolderID).Kind == FromLabel {
		c.Identity.NodeID = c.Identity.HolderID
	}
	c.TTL = millis(KeyTTLMillis, o.TTLMs, lease.MinTTL)
	c.MaxClockSkew = millis(KeyMaxClockSkewMs, o.MaxClockSkewMs, 0)
	c.DefaultPoll = millis(KeyDefaultPollMillis, o.DefaultPollMs, 10*time.Millisecond)
	c.KeepAlive = millis(KeyKeepAliveMillis, o.KeepAliveMs, 100*time.Millisecond)
	c.MaxConnections = connectionLimit(KeyMaxConnections, o.MaxConnections, bad)
	c.MaxConnectionsPerClient = connectionLimit(KeyMaxConnectionsPerClient, o.MaxConnectionsPerClient, bad)
	c.ShutdownTimeout = millis(KeyShutdownTimeoutMs, o.ShutdownTimeoutMs, 0)
	if o.RenewIntervalMs != nil {
		c.RenewInterval = millis(KeyRenewIntervalMs, *o.RenewIntervalMs, 10*time.Millisecond)
	}
	if c.Source(KeyMaxClockSkewMs).Kind == FromDefault && c.TTL > 0 {
		// The default allowance scales down with short TTLs, so that a TTL of 1 s works
		// without touching the skew.
		c.MaxClockSkew = lease.DefaultMaxClockSkewFor(c.TTL)
	}
	if c.TTL > 0 && lease.CheckClockSkew(c.TTL, c.MaxClockSkew) != nil {
		bad(KeyMaxClockSkewMs, fmt.Sprintf("must be below the TTL (%s = %d): set %s below %d, or leave it unset (default: %d, at most a tenth of the TTL), or raise %s",
			KeyTTLMillis, c.TTL.Milliseconds(), KeyMaxClockSkewMs, c.TTL.Milliseconds(), lease.DefaultMaxClockSkew.Milliseconds(), KeyTTLMillis))
	}
	if o.MaxCASRetries < 0 || o.MaxCASRetries > 1000 {
		bad(KeyMaxCASRetries, "want a whole number from 0 to 1000")
	}
	c.MaxCASRetries = int(o.MaxCASRetries)

	c.Listen = o.Listen
	if _, port, err := net.SplitHostPort(c.Listen); c.Listen != ListenOff && (err != nil || port == "") {
		bad(KeyListen, "want host:port, e.g. 0.0.0.0:8080 or 127.0.0.1:9000, or off")
	}

	c.Elections = buildElections(o, bad)
	c.ElectionID = o.ElectionID
	if o.Server != "" {
		server, err := BaseURL(o.Server)
		if err != nil { // BaseURL quotes the value without its credentials
			errs = append(errs, fmt.Errorf("invalid %s (from %s): %w", KeyServer, c.Source(KeyServer), err))
		}
		c.Server = server
	}

	origins, err := parseOrigins(o.CORSAllowedOrigins)
	if err != nil {
		bad(KeyCORSAllowedOrigins, err.Error())
	}
	c.CORSAllowedOrigins = origins

	switch o.ChildCgroup {
	case "auto":
		c.ChildCgroup = true
	case "off":
	default:
		bad(KeyChildCgroup, "want auto or off")
	}

	kind, dir, err := ParseStore(o.Store)
	switch {
	case errors.Is(err, ErrStoreCredentials):
		errs = append(errs, fmt.Errorf("invalid %s %q (from %s): an etcd URL takes no user, password or query, since it is logged: remove them, "+
			"and set the user in %s (or --%s) and the password in %s (naming a file that holds it) or %s",
			KeyStore, redactStore(o.Store), c.Source(KeyStore), EnvName(prefix, KeyEtcdUsername), FlagName(KeyEtcdUsername),
			schema(prefix).FileVariable(KeyEtcdPassword), EnvName(prefix, KeyEtcdPassword)))
	case err != nil:
		errs = append(errs, fmt.Errorf("invalid %s %q (from %s): %s", KeyStore, redactStore(o.Store), c.Source(KeyStore), err))
	default:
		c.Store, c.StoreDir = kind, dir
	}
	if c.Store == StoreEtcd {
		c.Etcd, err = buildEtcd(prefix, o, c.Source, millis)
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
}

// connectionLimit reads an optional connection limit: unset is 0 (the server's default). That
// the per-client limit does not exceed the global one is the server's rule, checked where the
// server is built (cmdutil.CheckConnectionLimit).
func connectionLimit(key string, n *int64, bad func(key, want string)) int {
	if n == nil {
		return 0
	}
	if *n < 1 || *n > 10_000_000 {
		bad(key, "want a whole number from 1 to 10000000, or nothing for the default derived from the descriptor limit (ulimit -n)")
		return 0
	}
	return int(*n)
}

// buildElections reads the elections API's settings. The trusted proxies are the server's to
// parse (servecmd), with the rest of its options.
func buildElections(o options, bad func(key, want string)) Elections {
	whole := func(key string, n int64, lo, hi int) int {
		if n < int64(lo) || n > int64(hi) {
			bad(key, fmt.Sprintf("want a whole number from %d to %d", lo, hi))
		}
		return int(n)
	}
	e := Elections{Namespace: o.ElectionsNamespace, TrustedProxies: o.TrustedProxies}
	switch o.Elections {
	case "on":
		e.Enabled = true
	case "off":
	default:
		bad(KeyElections, "want on or off")
	}
	if err := lease.ValidateNamespace(e.Namespace); err != nil {
		bad(KeyElectionsNamespace, err.Error())
	}
	if o.RoomShards != nil {
		e.Shards = whole(KeyRoomShards, *o.RoomShards, 1, rooms.MaxShards)
	}
	if o.MaxActiveRooms != nil {
		n := whole(KeyMaxActiveRooms, *o.MaxActiveRooms, 0, 10_000_000)
		e.MaxActiveRooms = &n
	}
	e.AdmissionPerMinute = whole(KeyAdmissionPerMinute, o.AdmissionPerMinute, 0, 1_000_000)
	e.MaxTrackedClients = whole(KeyMaxTrackedClients, o.MaxTrackedClients, 1, 10_000_000)
	e.MaxWatchesPerClient = whole(KeyMaxWatchesPerClient, o.MaxWatchesPerClient, 1, 1_000_000)
	e.MaxWatches = whole(KeyMaxWatches, o.MaxWatches, 1, 1_000_000)
	lifetime := whole(KeyWatchLifetimeMs, o.WatchLifetimeMs, 1000, 24*3600*1000)
	e.WatchLifetime = time.Duration(lifetime) * time.Millisecond
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
