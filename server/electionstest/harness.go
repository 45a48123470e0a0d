package electionstest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server"
	"github.com/regbo/lfp-swarm-lease/server/clientip"
	"github.com/regbo/lfp-swarm-lease/server/elections"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// NewStore returns a handle on the store under test. Every call during one suite run must reach
// the same stored state (the same memory store, a file store on the same directory, a client of
// the same Swarm), so that servers on different handles act like replicas.
type NewStore func(t *testing.T) rooms.Store

// Limits are the settings a test changes from the defaults.
type Limits struct {
	Disabled            bool
	AdmissionPerMinute  int
	MaxActiveRooms      int
	MaxWatchesPerClient int
	MaxWatches          int
	WatchLifetime       time.Duration
	TrustedProxies      string
	KeepAlive           time.Duration
}

// cluster is a set of servers ("replicas") sharing one namespace on the store under test.
type cluster struct {
	t    *testing.T
	urls []string
	logs *leasetest.SyncBuffer // the servers' logs, so that a test can prove no token reaches them
}

// start runs n servers on handles of the store, each with its own rooms.Manager on one fresh
// namespace, until the test ends (Serve); their shards are removed at the end.
func start(t *testing.T, newStore NewStore, n int, l Limits) *cluster {
	t.Helper()
	ns := leasetest.Namespace(t)
	c := &cluster{t: t, logs: &leasetest.SyncBuffer{}}
	logger := slog.New(slog.NewTextHandler(c.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cleanupStore := newStore(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := cleanupStore.DeleteShards(ctx, ns); err != nil {
			t.Errorf("remove the shards of %q: %v", ns, err)
		}
	})
	for range n {
		opts := []rooms.Option{rooms.WithMaxClockSkew(0), rooms.WithMaxActiveRooms(l.MaxActiveRooms)}
		m, err := rooms.New(newStore(t), ns, opts...)
		if err != nil {
			t.Fatal(err)
		}
		proxies, err := clientip.ParseTrustedProxies(l.TrustedProxies)
		if err != nil {
			t.Fatal(err)
		}
		c.urls = append(c.urls, Serve(t, server.Options{
			Logger: logger, PollInterval: 200 * time.Millisecond, KeepAlive: l.KeepAlive,
			Elections: &elections.Options{Rooms: m, Disabled: l.Disabled, AdmissionPerMinute: l.AdmissionPerMinute,
				MaxWatchesPerClient: l.MaxWatchesPerClient, MaxWatches: l.MaxWatches, WatchLifetime: l.WatchLifetime,
				TrustedProxies: proxies},
		}))
	}
	return c
}

// Serve runs a server with opts on a loopback port until the test ends, and returns its base
// URL. Like the commands that serve the API, it installs the API's error model first.
func Serve(t *testing.T, opts server.Options) string {
	t.Helper()
	wire.InstallErrorModel()
	s, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// reply is one HTTP answer: status, headers and the JSON body as raw fields.
type reply struct {
	status int
	header http.Header
	raw    []byte
	fields map[string]json.RawMessage
}

// call sends method path to replica i with body (a JSON value, or raw bytes as []byte) and
// optional header pairs; Content-Type is application/json unless a pair sets it.
func (c *cluster) call(i int, method, path string, body any, header ...string) reply {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.urls[i]+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for j := 0; j+1 < len(header); j += 2 {
		if header[j+1] == "" {
			req.Header.Del(header[j])
		} else {
			req.Header.Set(header[j], header[j+1])
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	r := reply{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) > 0 && strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &r.fields); err != nil {
			c.t.Fatalf("%s %s: body is not a JSON object: %v: %s", method, path, err, raw)
		}
	}
	return r
}

func (r reply) str(field string) string {
	var s string
	_ = json.Unmarshal(r.fields[field], &s)
	return s
}

func (r reply) num(field string) int64 {
	var n int64
	_ = json.Unmarshal(r.fields[field], &n)
	return n
}

func (r reply) has(field string) bool { _, ok := r.fields[field]; return ok }

// leader decodes the leader object of a reply.
func (r reply) leader(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	var l map[string]json.RawMessage
	if err := json.Unmarshal(r.fields["leader"], &l); err != nil || l == nil {
		t.Fatalf("no leader object in %s", r.raw)
	}
	return l
}
