package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server"
	"github.com/regbo/lfp-swarm-lease/server/connlimit"
	"github.com/regbo/lfp-swarm-lease/server/elections"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// floodChildEnv makes the test binary a server process (see TestMain) with a lowered
// descriptor limit, serving the elections API on the file store in the directory it names.
const floodChildEnv = "LFP_SERVER_TEST_FLOOD_STORE"

// floodChildOneBound, set in the child's environment, lifts the per-client bound to the global
// one, so that the flood (all from 127.0.0.1) meets MaxConnections itself.
const floodChildOneBound = "LFP_SERVER_TEST_FLOOD_ONE_BOUND"

// floodChildNofile is the child's RLIMIT_NOFILE (soft and hard): small, so that a flood of a
// few thousand connections is more than the process can hold.
const floodChildNofile = 1024

// capacityChildEnv makes the test binary print connlimit.Capacity and exit.
const capacityChildEnv = "LFP_SERVER_TEST_PRINT_CAPACITY"

func TestMain(m *testing.M) {
	wire.InstallErrorModel() // as the commands that serve the API do
	if dir := os.Getenv(floodChildEnv); dir != "" {
		os.Exit(serveFloodChild(dir))
	}
	if os.Getenv(capacityChildEnv) != "" {
		capacity, ok := connlimit.Capacity()
		fmt.Println(capacity, ok)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestConnectionCapacityFollowsTheRaisedLimit: a process started with a soft RLIMIT_NOFILE
// below its hard one runs with the soft limit raised (Go does it at start, to one below the
// hard limit), and the default connection bound derives from the raised value.
func TestConnectionCapacityFollowsTheRaisedLimit(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("prlimit (util-linux) is needed under CI")
		}
		t.Skip("prlimit (util-linux) is not installed")
	}
	cmd := exec.Command(prlimit, "--nofile=256:1024", "--", os.Args[0])
	cmd.Env = append(os.Environ(), capacityChildEnv+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	const raised = 1023
	if want := fmt.Sprintf("%d true", raised-(64+raised/8)); strings.TrimSpace(string(out)) != want {
		t.Fatalf("capacity under a soft limit of 256 and a hard one of 1024: %q, want %q (from the raised %d)", out, want, raised)
	}
}

// serveFloodChild serves until SIGTERM with every connection limit at its default, which
// derives from the lowered descriptor limit. It prints its address on stdout.
func serveFloodChild(dir string) int {
	lim := syscall.Rlimit{Cur: floodChildNofile, Max: floodChildNofile}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		return 1
	}
	store, err := filestore.New(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	m, err := rooms.New(store, "flood", rooms.WithMaxClockSkew(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	opts := server.Options{Elections: &elections.Options{Rooms: m, AdmissionPerMinute: -1}}
	if os.Getenv(floodChildOneBound) != "" {
		opts.MaxConnectionsPerClient, _ = connlimit.Capacity()
	}
	s, err := server.New(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(ln.Addr().String())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := s.Serve(ctx, ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startFloodChild starts the server process and returns its base URL, its stderr so far and
// the number of descriptors it has open.
func startFloodChild(t *testing.T, env ...string) (base string, stderr func() string, openFDs func() int) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), floodChildEnv+"="+t.TempDir()), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	errFile, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close() // the child holds its own copy
	cmd.Stderr = errFile
	stderr = func() string { b, _ := os.ReadFile(errFile.Name()); return string(b) }
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("server process: %v; stderr: %s", err, stderr())
	}
	openFDs = func() int {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
		if err != nil {
			t.Fatalf("the server process's descriptors: %v", err)
		}
		return len(fds)
	}
	return "http://" + strings.TrimSpace(line), stderr, openFDs
}

// connFlood holds idle keep-alive and slowloris connections open against addr, redialling a
// lost one after redialDelay, until ctx ends or the dial budget is spent.
type connFlood struct {
	addr        string
	redialDelay time.Duration
	budget      atomic.Int64 // dials left
	dials       atomic.Int64
	held        atomic.Int64 // connections currently open on the client side
	wg          sync.WaitGroup
}

func (f *connFlood) start(ctx context.Context, idle, slow int) {
	for i := range idle + slow {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			for ctx.Err() == nil && f.budget.Add(-1) >= 0 {
				f.dials.Add(1)
				if i < idle {
					f.hold(ctx, holdIdle)
				} else {
					f.hold(ctx, func(c net.Conn) { holdSlow(ctx, c) })
				}
				select {
				case <-ctx.Done():
				case <-time.After(f.redialDelay):
				}
			}
		}()
	}
}

// hold dials a connection and runs use on it; the connection closes when use returns or ctx
// ends.
func (f *connFlood) hold(ctx context.Context, use func(net.Conn)) {
	c, err := (&net.Dialer{Timeout: 3 * time.Second}).DialContext(ctx, "tcp", f.addr)
	if err != nil {
		return
	}
	f.held.Add(1)
	defer f.held.Add(-1)
	defer context.AfterFunc(ctx, func() { c.Close() })()
	defer c.Close()
	use(c)
}

// holdIdle makes one request on a connection, then keeps it open without a word.
func holdIdle(c net.Conn) {
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: flood\r\n\r\n"); err != nil {
		return
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_, _ = br.ReadByte() // blocks until the server closes the connection (or the flood ends)
}

// holdSlow trickles a request's headers, one line a second, never ending them.
func holdSlow(ctx context.Context, c net.Conn) {
	closed := make(chan struct{})
	go func() { _, _ = c.Read(make([]byte, 1)); close(closed) }() // the server's close ends the trickle at once
	if _, err := io.WriteString(c, "POST /elections/flood-room-0001/campaign HTTP/1.1\r\nHost: flood\r\n"); err != nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-closed:
			return
		case <-time.After(time.Second):
		}
		if _, err := io.WriteString(c, "X-Trickle: x\r\n"); err != nil {
			return
		}
	}
}

// floodLeader is a room's leader renewing through the flood.
type floodLeader struct {
	base, room, token string
	term              uint64
	ttl               time.Duration
	confirmed         time.Time // the start of the last confirmed campaign or renewal
}

type renewal struct {
	Status      string `json:"status"`
	LeaderToken string `json:"leader_token"`
	Leader      struct {
		Term uint64 `json:"term"`
	} `json:"leader"`
}

// post sends one elections request and decodes a 200 answer; reused reports whether the
// request went on a kept-alive connection.
func (l *floodLeader) post(client *http.Client, op string, body any) (r renewal, reused bool, err error) {
	b, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, l.base+"/elections/"+l.room+"/"+op, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return r, reused, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return r, reused, fmt.Errorf("%s: %d %s", op, resp.StatusCode, raw)
	}
	return r, reused, json.Unmarshal(raw, &r)
}

// renewFor renews every interval for d. A failed attempt is retried after 100 ms; the term
// must never lapse (no gap between confirmed renewals reaches the TTL) and never change. It
// returns the renewals, how many went on a kept-alive connection, and the failed attempts.
func (l *floodLeader) renewFor(t *testing.T, client *http.Client, d, interval time.Duration) (renewals, reused int, failures []string) {
	t.Helper()
	for end := time.Now().Add(d); ; {
		for {
			started := time.Now()
			if started.Sub(l.confirmed) >= l.ttl {
				t.Fatalf("the term lapsed: no confirmed renewal for %s (failures: %q)", started.Sub(l.confirmed), failures)
			}
			r, onReused, err := l.post(client, "renew", map[string]any{"leader_token": l.token, "ttl_seconds": int(l.ttl / time.Second)})
			if err == nil && (r.Status != "leader" || r.Leader.Term != l.term) {
				t.Fatalf("renewal answered %+v, want leader of term %d", r, l.term)
			}
			if err == nil {
				l.confirmed = started
				renewals++
				if onReused {
					reused++
				}
				break
			}
			failures = append(failures, err.Error())
			time.Sleep(100 * time.Millisecond) // a client's retry pause, not synchronisation
		}
		if !time.Now().Add(interval).Before(end) {
			return renewals, reused, failures
		}
		time.Sleep(interval) // the leader's renewal cadence
	}
}

// TestLeaderKeepsItsTermThroughConnectionFlood: a server process whose descriptor limit is
// 1,024 is flooded with a few thousand idle keep-alive and slowloris connections, all from
// 127.0.0.1 like the leader; the leader renews through it on its kept-alive connection, then
// on a new connection for every renewal, and keeps its term throughout. With the default
// bounds the per-client one (a quarter) meets the flood; with one bound, the global one.
func TestLeaderKeepsItsTermThroughConnectionFlood(t *testing.T) {
	leasetest.Long(t, "floods a server process with thousands of connections for several TTLs")
	t.Run("default bounds", func(t *testing.T) { leaderThroughFlood(t) })
	t.Run("one bound", func(t *testing.T) { leaderThroughFlood(t, floodChildOneBound+"=1") })
}

func leaderThroughFlood(t *testing.T, childEnv ...string) {
	base, stderr, openFDs := startFloodChild(t, childEnv...)
	l := &floodLeader{base: base, room: "flood-room-0001", ttl: 5 * time.Second}
	keepAlive := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer keepAlive.CloseIdleConnections()
	started := time.Now()
	won, _, err := l.post(keepAlive, "campaign", map[string]any{"candidate_id": "leader", "ttl_seconds": 5})
	if err != nil || won.Status != "leader" {
		t.Fatalf("campaign: %+v %v", won, err)
	}
	l.token, l.term, l.confirmed = won.LeaderToken, won.Leader.Term, started

	ctx, cancel := context.WithCancel(context.Background())
	flood := &connFlood{addr: strings.TrimPrefix(base, "http://"), redialDelay: 3 * time.Second}
	flood.budget.Store(12000)
	defer func() { cancel(); flood.wg.Wait() }()
	const idle, slow = 1500, 1000
	flood.start(ctx, idle, slow)
	// The flood is on once every flooder has dialled: far more connections than the server
	// process has descriptors. The leader renews meanwhile.
	for deadline := time.Now().Add(20 * time.Second); flood.dials.Load() < idle+slow; {
		if time.Now().After(deadline) {
			t.Fatalf("the flood dialled only %d connections", flood.dials.Load())
		}
		if _, _, failures := l.renewFor(t, keepAlive, 0, 0); len(failures) > 0 {
			t.Logf("renewals while the flood builds up: %q", failures)
		}
		time.Sleep(time.Second) // the leader's renewal cadence
	}

	// The server keeps descriptors in reserve for the store whatever the flood holds.
	if fds := openFDs(); fds > floodChildNofile-64 {
		t.Errorf("the server process has %d descriptors open of %d: no reserve left", fds, floodChildNofile)
	}
	n, reused, failures := l.renewFor(t, keepAlive, 6*time.Second, 1500*time.Millisecond)
	t.Logf("kept-alive connection: %d renewals, %d on a reused connection, failed attempts %q; flood: %d dials, %d held",
		n, reused, failures, flood.dials.Load(), flood.held.Load())
	// A kept-alive connection that has carried one request looks like the flood's idle ones
	// and may be shed (the client then redials, or retries a request that raced the close);
	// one that has carried several is shed last, so most renewals reuse it.
	if len(failures) > 2 || reused < n/2 {
		t.Errorf("on the kept-alive connection: %d of %d renewals reused it, failed attempts %q", reused, n, failures)
	}

	t.Logf("the server process holds %d descriptors", openFDs())
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	n, reused, failures = l.renewFor(t, fresh, 6*time.Second, 1500*time.Millisecond)
	t.Logf("new connection per renewal: %d renewals, failed attempts %q; flood: %d dials, %d held",
		n, failures, flood.dials.Load(), flood.held.Load())
	if len(failures) > 2 || reused > 0 {
		t.Errorf("on new connections: failed attempts %q (%d reused)", failures, reused)
	}
	if s := stderr(); strings.Contains(s, "too many open files") {
		t.Errorf("the server ran out of descriptors: %s", s)
	}
}
