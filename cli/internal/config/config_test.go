package config_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
)

func flags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	config.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func env(vars ...string) func() []string { return func() []string { return vars } }

func task(labels map[string]string) func(context.Context) (config.Task, error) {
	return func(context.Context) (config.Task, error) {
		return config.Task{ServiceName: "stack_ctl", NodeID: "node-1", TaskID: "task-1", Labels: labels}, nil
	}
}

func TestPrecedenceFlagsEnvLabelsDefaults(t *testing.T) {
	l := config.Loader{
		Flags:    flags(t, "--ttl-ms", "4000"),
		Environ:  env("SWARM_LEASE_TTL_MS=3000", "SWARM_LEASE_MAX_CAS_RETRIES=3"),
		Discover: task(map[string]string{"swarm-lease.ttl_ms": "2000", "swarm-lease.max_cas_retries": "2", "swarm-lease.default_poll_ms": "250"}),
	}
	c, err := l.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		key  string
		got  any
		want any
		src  config.SourceKind
	}{
		{config.KeyTTLMillis, c.TTL, 4 * time.Second, config.FromFlag},
		{config.KeyMaxCASRetries, c.MaxCASRetries, 3, config.FromEnv},
		{config.KeyDefaultPollMillis, c.DefaultPoll, 250 * time.Millisecond, config.FromLabel},
		{config.KeyKeepAliveMillis, c.KeepAlive, 15 * time.Second, config.FromDefault},
		{config.KeyNamespace, c.Namespace, "stack_ctl", config.FromLabel},
		{config.KeyHolderID, c.Identity.HolderID, "node-1", config.FromLabel},
		{config.KeyTaskID, c.Identity.TaskID, "task-1", config.FromLabel},
	}
	for _, ch := range checks {
		if ch.got != ch.want || c.Source(ch.key).Kind != ch.src {
			t.Errorf("%s = %v from %v, want %v from kind %d", ch.key, ch.got, c.Source(ch.key), ch.want, ch.src)
		}
	}
	if c.Identity.NodeID != "node-1" || c.Store != config.StoreSwarm || c.Task == nil {
		t.Errorf("identity %+v store %q task %v", c.Identity, c.Store, c.Task)
	}
}

func TestEnvPrefixSwitchesEveryVariableAndLabel(t *testing.T) {
	l := config.Loader{
		EnvPrefix: "POSTGRES",
		Environ:   env("POSTGRES_NAMESPACE=pg", "POSTGRES_HOLDER_ID=h", "SWARM_LEASE_TTL_MS=9000", "POSTGRES_STORE=memory"),
		Discover:  task(map[string]string{"postgres.ttl_ms": "7000"}),
	}
	c, err := l.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// SWARM_LEASE_* is ignored under another prefix; the store is memory and the identity is
	// complete, so discovery does not even run.
	if c.Namespace != "pg" || c.Identity.HolderID != "h" || c.TTL != 30*time.Second || c.Task != nil {
		t.Fatalf("config = %+v", c)
	}
}

func TestFileVariant(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ns")
	if err := os.WriteFile(path, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l := config.Loader{
		Environ: env("SWARM_LEASE_NAMESPACE_FILE="+path, "SWARM_LEASE_HOLDER_ID=h", "SWARM_LEASE_STORE=memory"),
	}
	c, err := l.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Namespace != "from-file" || !strings.Contains(c.Source(config.KeyNamespace).String(), "SWARM_LEASE_NAMESPACE_FILE") {
		t.Fatalf("namespace %q from %v", c.Namespace, c.Source(config.KeyNamespace))
	}
}

func TestInvalidValuesNameSettingAndSource(t *testing.T) {
	l := config.Loader{
		Flags:    flags(t, "--store", "s3://bucket"),
		Environ:  env("SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_LISTEN=8080"), // no holder ID: discovery runs
		Discover: task(map[string]string{"swarm-lease.ttl_ms": "1h"}),
	}
	_, err := l.Load(context.Background())
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`invalid store "s3://bucket" (from flag --store)`,
		`invalid listen "8080" (from environment variable SWARM_LEASE_LISTEN)`,
		`invalid ttl_ms "1h" (from container label swarm-lease.ttl_ms)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestDiscoveryFailureIsFatalOnlyWhenIdentityIsMissing(t *testing.T) {
	failing := func(context.Context) (config.Task, error) { return config.Task{}, errors.New("no container named abc") }
	_, err := config.Loader{Environ: env("SWARM_LEASE_STORE=memory"), Discover: failing}.Load(context.Background())
	// The missing settings and how to set them first; discovery's failure after them.
	if !errors.Is(err, config.ErrDiscovery) || !strings.HasPrefix(err.Error(), "no namespace and no holder ID: set --namespace or SWARM_LEASE_NAMESPACE, and --holder-id or SWARM_LEASE_HOLDER_ID (") ||
		!strings.Contains(err.Error(), "no container named abc") {
		t.Fatalf("err = %v", err)
	}
	c, err := config.Loader{Environ: env("SWARM_LEASE_NAMESPACE=n", "SWARM_LEASE_HOLDER_ID=h"), Discover: failing}.Load(context.Background())
	if err != nil || c.Task != nil {
		t.Fatalf("explicit identity on swarm: %v, %+v", err, c)
	}
}

func TestRequireElection(t *testing.T) {
	c, err := config.Loader{Environ: env("SWARM_LEASE_NAMESPACE=bad name", "SWARM_LEASE_HOLDER_ID=h")}.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.RequireElection(); err == nil || !strings.Contains(err.Error(), "environment variable SWARM_LEASE_NAMESPACE") {
		t.Fatalf("err = %v", err)
	}
}

// TestRemoteSkipsDiscoveryAndValidates: with a server set, run needs no Docker access (no
// discovery, even on the default Swarm store), and RequireRemote names each setting that the
// elections API cannot take.
func TestRemoteSkipsDiscoveryAndValidates(t *testing.T) {
	noDocker := func(context.Context) (config.Task, error) {
		t.Fatal("discovery ran with a server configured")
		return config.Task{}, nil
	}
	load := func(vars ...string) *config.Config {
		t.Helper()
		c, err := config.Loader{Remote: true, Environ: env(append([]string{"SWARM_LEASE_SERVER=http://elect:8080"}, vars...)...), Discover: noDocker,
			Hostname: func() string { return "web 1/☃" }}.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if err := load("SWARM_LEASE_ELECTION=nightly-report", "SWARM_LEASE_TTL_MS=5000", "SWARM_LEASE_SHUTDOWN_TIMEOUT_MS=1000").RequireRemote(); err != nil {
		t.Fatalf("valid remote settings: %v", err)
	}
	if err := load("SWARM_LEASE_ELECTION=nightly-report").RequireRemote(); err != nil {
		t.Fatalf("the defaults (TTL 30 s, grace 10 s): %v", err)
	}
	// The hostname is the candidate id's default, made one (the holder ID's default, once).
	if c := load("SWARM_LEASE_ELECTION=nightly-report"); c.Identity.HolderID != "web-1----" || c.Source(config.KeyHolderID).String() != "default: the hostname" {
		t.Fatalf("candidate id from the hostname: %q (%s), want %q", c.Identity.HolderID, c.Source(config.KeyHolderID), "web-1----")
	}
	noHost, err := config.Loader{Remote: true, Environ: env("SWARM_LEASE_SERVER=http://elect:8080", "SWARM_LEASE_ELECTION=nightly-report"), Discover: noDocker,
		Hostname: func() string { return "" }}.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := noHost.RequireRemote(); err == nil || !strings.Contains(err.Error(), "SWARM_LEASE_HOLDER_ID") {
		t.Fatalf("no hostname and no holder ID: %v, want an error naming SWARM_LEASE_HOLDER_ID", err)
	}
	for _, tc := range []struct {
		vars []string
		want []string
	}{
		{nil, []string{"no election", "SWARM_LEASE_ELECTION", "--election"}},
		{[]string{"SWARM_LEASE_ELECTION=short"}, []string{"invalid election", "SWARM_LEASE_ELECTION"}},
		{[]string{"SWARM_LEASE_ELECTION=nightly-report", "SWARM_LEASE_TTL_MS=2500"}, []string{"invalid ttl_ms 2500", "whole seconds", "SWARM_LEASE_TTL_MS"}},
		{[]string{"SWARM_LEASE_ELECTION=nightly-report", "SWARM_LEASE_TTL_MS=301000"}, []string{"invalid ttl_ms"}},
		{[]string{"SWARM_LEASE_ELECTION=nightly-report", "SWARM_LEASE_HOLDER_ID=agent/a"}, []string{"invalid holder_id", "candidate id"}},
	} {
		err := load(tc.vars...).RequireRemote()
		if err == nil {
			t.Errorf("%v: accepted", tc.vars)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not mention %q", tc.vars, err, w)
			}
		}
	}
}

// TestConnectionLimits: both limits are optional whole numbers (empty: the server derives them
// from the descriptor limit). That the per-client one may not exceed the global one is the
// server's rule, checked where the server is built (cmdutil's TestConnectionLimitsFitTheServer).
func TestConnectionLimits(t *testing.T) {
	load := func(vars ...string) (*config.Config, error) {
		l := config.Loader{Environ: env(append([]string{"SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=h", "SWARM_LEASE_STORE=memory"}, vars...)...)}
		return l.Load(context.Background())
	}
	c, err := load()
	if err != nil || c.MaxConnections != 0 || c.MaxConnectionsPerClient != 0 {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = load("SWARM_LEASE_MAX_CONNECTIONS=900", "SWARM_LEASE_MAX_CONNECTIONS_PER_CLIENT=100")
	if err != nil || c.MaxConnections != 900 || c.MaxConnectionsPerClient != 100 {
		t.Fatalf("set: %+v %v", c, err)
	}
	for _, tc := range []struct {
		vars []string
		want string
	}{
		{[]string{"SWARM_LEASE_MAX_CONNECTIONS=0"}, `invalid max_connections "0" (from environment variable SWARM_LEASE_MAX_CONNECTIONS)`},
		{[]string{"SWARM_LEASE_MAX_CONNECTIONS_PER_CLIENT=many"}, `invalid max_connections_per_client "many"`},
	} {
		if _, err := load(tc.vars...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.vars, err, tc.want)
		}
	}
}

// TestHolderDefaultsToTheHostname: outside a Swarm task the holder ID is the hostname, so a
// missing holder ID never makes a command discover; discovery runs only for the Swarm store or a
// missing namespace, and its failure names the flag with the variable.
func TestHolderDefaultsToTheHostname(t *testing.T) {
	noDocker := func(context.Context) (config.Task, error) {
		t.Fatal("discovery ran for a missing holder ID")
		return config.Task{}, nil
	}
	host := func() string { return "build-7" }
	c, err := config.Loader{Environ: env("SWARM_LEASE_NAMESPACE=n", "SWARM_LEASE_STORE=file:///tmp/x"), Discover: noDocker, Hostname: host}.Load(context.Background())
	if err != nil || c.Identity.HolderID != "build-7" || c.Source(config.KeyHolderID).String() != "default: the hostname" {
		t.Fatalf("holder %q from %v, %v", c.Identity.HolderID, c.Source(config.KeyHolderID), err)
	}
	failing := func(context.Context) (config.Task, error) {
		return config.Task{}, errors.New("no container named build-7")
	}
	c, err = config.Loader{Environ: env("SWARM_LEASE_NAMESPACE=n", "SWARM_LEASE_HOLDER_ID=h"), Discover: failing, Hostname: host}.Load(context.Background())
	if err != nil || c.Identity.HolderID != "h" {
		t.Fatalf("an explicit holder ID wins: %+v, %v", c, err)
	}
	c, err = config.Loader{Environ: env("SWARM_LEASE_NAMESPACE=n"), Discover: failing, Hostname: host}.Load(context.Background())
	if err != nil || c.Identity.HolderID != "build-7" {
		t.Fatalf("swarm store outside a task: %+v, %v", c, err)
	}
	_, err = config.Loader{Environ: env("SWARM_LEASE_STORE=file:///tmp/x"), Discover: failing, Hostname: host}.Load(context.Background())
	if !errors.Is(err, config.ErrDiscovery) || !strings.HasPrefix(err.Error(), "no namespace: set --namespace or SWARM_LEASE_NAMESPACE (") {
		t.Fatalf("no namespace: %v", err)
	}
	task := func(context.Context) (config.Task, error) {
		return config.Task{ServiceName: "svc", NodeID: "node-1"}, nil
	}
	c, err = config.Loader{Environ: env(), Discover: task, Hostname: host}.Load(context.Background())
	if err != nil || c.Identity.HolderID != "node-1" {
		t.Fatalf("in a task the node ID wins over the hostname: %+v, %v", c, err)
	}
}

// TestShortTTLScalesTheSkewDefault: a TTL of 1 s works out of the box — the default skew
// allowance is at most a tenth of the TTL — while an explicit skew at or above the TTL is refused
// with the setting and what to set.
func TestShortTTLScalesTheSkewDefault(t *testing.T) {
	load := func(vars ...string) (*config.Config, error) {
		return config.Loader{Environ: env(append([]string{"SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=h", "SWARM_LEASE_STORE=memory"}, vars...)...)}.Load(context.Background())
	}
	for _, tc := range []struct {
		ttl  string
		skew time.Duration
	}{{"1000", 100 * time.Millisecond}, {"30000", time.Second}, {"5000", 500 * time.Millisecond}, {"600000", time.Second}} {
		c, err := load("SWARM_LEASE_TTL_MS=" + tc.ttl)
		if err != nil || c.MaxClockSkew != tc.skew {
			t.Errorf("ttl_ms %s: skew %v, %v; want %v", tc.ttl, c.MaxClockSkew, err, tc.skew)
		}
	}
	if c, err := load("SWARM_LEASE_TTL_MS=1000", "SWARM_LEASE_MAX_CLOCK_SKEW_MS=300"); err != nil || c.MaxClockSkew != 300*time.Millisecond {
		t.Errorf("an explicit skew is kept: %v", err)
	}
	_, err := load("SWARM_LEASE_TTL_MS=1000", "SWARM_LEASE_MAX_CLOCK_SKEW_MS=1000")
	if err == nil || !strings.Contains(err.Error(), "max_clock_skew_ms") || !strings.Contains(err.Error(), "set max_clock_skew_ms below 1000") {
		t.Fatalf("skew = TTL: %v", err)
	}
}

// TestCORSAllowedOrigins: a comma-separated list of origins; anything with a path, another
// scheme or no host is refused naming the setting.
func TestCORSAllowedOrigins(t *testing.T) {
	load := func(v string) (*config.Config, error) {
		return config.Loader{Environ: env("SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=h", "SWARM_LEASE_STORE=memory", "SWARM_LEASE_CORS_ALLOWED_ORIGINS="+v)}.Load(context.Background())
	}
	c, err := load(" https://a.example , http://localhost:3000/,*")
	if err != nil || !slices.Equal(c.CORSAllowedOrigins, []string{"https://a.example", "http://localhost:3000", "*"}) {
		t.Fatalf("%v, %v", c, err)
	}
	if c, err := load(""); err != nil || c.CORSAllowedOrigins != nil {
		t.Fatalf("empty: %v, %v", c.CORSAllowedOrigins, err)
	}
	for _, bad := range []string{"a.example", "https://a.example/app", "ftp://a.example"} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "cors_allowed_origins") || !strings.Contains(err.Error(), "not an origin") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestNumericFlagsAreTyped: the flags of whole-number settings are int64 flags: the parser
// refuses a word, and a given number reaches the setting with its source.
func TestNumericFlagsAreTyped(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	config.RegisterFlags(fs)
	for _, name := range []string{"ttl-ms", "max-cas-retries", "renew-interval-ms", "room-shards", "max-connections"} {
		if f := fs.Lookup(name); f == nil || f.Value.Type() != "int64" {
			t.Errorf("--%s: %v", name, f)
		}
	}
	if err := fs.Parse([]string{"--ttl-ms", "soon"}); err == nil || !strings.Contains(err.Error(), "--ttl-ms") {
		t.Fatalf("--ttl-ms soon: %v", err)
	}
	c, err := config.Loader{Flags: flags(t, "--ttl-ms", "4000"), Environ: env("SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=h", "SWARM_LEASE_STORE=memory", "SWARM_LEASE_TTL_MS=9000")}.Load(context.Background())
	if err != nil || c.TTL != 4*time.Second || c.Source(config.KeyTTLMillis).String() != "flag --ttl-ms" {
		t.Fatalf("%v, %v", c, err)
	}
}

// TestFileVariantRules: the _FILE variant reads a real file through the file provider, its
// trailing newline trimmed and its number typed like a flag's; both variants set is an error
// naming both; an unreadable or empty file is an error naming the variable and the file.
func TestFileVariantRules(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ttl, empty := write("ttl", "4000\r\n"), write("empty", "\n")
	base := []string{"SWARM_LEASE_NAMESPACE=x", "SWARM_LEASE_HOLDER_ID=h", "SWARM_LEASE_STORE=memory"}
	load := func(vars ...string) (*config.Config, error) {
		return config.Loader{Environ: env(append(slices.Clone(base), vars...)...)}.Load(context.Background())
	}
	c, err := load("SWARM_LEASE_TTL_MS_FILE=" + ttl)
	if err != nil || c.TTL != 4*time.Second || c.Source(config.KeyTTLMillis).String() != "file "+ttl+" named by SWARM_LEASE_TTL_MS_FILE" {
		t.Fatalf("ttl from a file: %v from %v, %v", c.TTL, c.Source(config.KeyTTLMillis), err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		vars []string
		want []string
	}{
		{[]string{"SWARM_LEASE_TTL_MS=3000", "SWARM_LEASE_TTL_MS_FILE=" + ttl}, []string{"both SWARM_LEASE_TTL_MS and SWARM_LEASE_TTL_MS_FILE are set"}},
		{[]string{"SWARM_LEASE_TTL_MS_FILE=" + missing}, []string{missing + " (named by SWARM_LEASE_TTL_MS_FILE) does not exist"}},
		{[]string{"SWARM_LEASE_LISTEN_FILE=" + empty}, []string{empty, "SWARM_LEASE_LISTEN_FILE", "is empty"}},
		{[]string{"SWARM_LEASE_TTL_MS_FILE=" + write("word", "soon\n")}, []string{`invalid ttl_ms "soon"`, "named by SWARM_LEASE_TTL_MS_FILE", "whole number"}},
	} {
		_, err := load(tc.vars...)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %v, want %q", tc.vars, err, w)
			}
		}
	}
}

// TestEveryLayerIsTyped: a whole number reads the same from a flag, a variable, a label and a
// default, and a word in any of them is refused naming the layer it came from.
func TestEveryLayerIsTyped(t *testing.T) {
	l := config.Loader{
		Flags:    flags(t, "--max-watches", "77"),
		Environ:  env("SWARM_LEASE_ROOM_SHARDS= 16 ", "SWARM_LEASE_MAX_CONNECTIONS="),
		Discover: task(map[string]string{"swarm-lease.max_active_rooms": "12", "swarm-lease.shutdown_timeout_ms": "2500"}),
	}
	c, err := l.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Elections.MaxWatches != 77 || c.Elections.Shards != 16 || c.Elections.MaxActiveRooms == nil || *c.Elections.MaxActiveRooms != 12 || c.ShutdownTimeout != 2500*time.Millisecond ||
		c.Elections.MaxWatchesPerClient != 32 || c.MaxConnections != 0 {
		t.Fatalf("typed values: %+v", c)
	}
	_, err = config.Loader{Environ: env("SWARM_LEASE_STORE=memory"), Discover: task(map[string]string{"swarm-lease.room_shards": "many"})}.Load(context.Background())
	if err == nil || !strings.Contains(err.Error(), `invalid room_shards "many" (from container label swarm-lease.room_shards): want a whole number`) {
		t.Fatalf("a word in a label: %v", err)
	}
}
