package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// The observer end to end (docs/http-api.md, "Watching from anywhere"): the Go client (clients/go) and the `watch` command against
// real `serve` processes on the file store, through restarts on the same port and a proxy
// moving the client between two replicas. Changes are made with try-acquire and release; after
// every reconnect the next value must be the change made after it, never a replay of the state
// the client already has.

// watchWait bounds each wait of these tests; it is only reached when one fails.
const watchWait = 15 * time.Second

// watchElection is a new file-store election with a fast watcher and a TTL no test outlives.
func watchElection(t *testing.T) []string {
	return []string{
		"SWARM_LEASE_STORE=file://" + t.TempDir(),
		"SWARM_LEASE_NAMESPACE=" + leasetest.Namespace(t),
		"SWARM_LEASE_DEFAULT_POLL_MS=100",
		"SWARM_LEASE_KEEP_ALIVE_MS=1000",
		"SWARM_LEASE_TTL_MS=120000",
	}
}

// watchFreeAddr picks a free loopback address. It is closed again so that serve can bind it;
// the same address is reused for a restart.
func watchFreeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// watchServer is one `lfp-swarm-lease serve` process on a fixed address (the restart tests
// need the same port again).
type watchServer = apiProc

// startWatchServer starts `serve` on addr and returns once it listens; it is killed at the end
// of the test if still running.
func startWatchServer(t *testing.T, env []string, addr string) *watchServer {
	t.Helper()
	return startServe(t, append([]string{"SWARM_LEASE_LISTEN=" + addr}, env...), "@"+addr)
}

// kill SIGKILLs the server: its streams end without a goodbye.
func (s *apiProc) kill(t *testing.T) {
	t.Helper()
	_ = s.cmd.Process.Kill()
	<-s.done
}

// sseClients is the server's gauge of connected SSE clients.
func (s *apiProc) sseClients(t *testing.T) int {
	t.Helper()
	resp, err := http.Get(s.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "lfp_swarm_lease_sse_clients "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
	}
	t.Fatal("no lfp_swarm_lease_sse_clients in /metrics")
	return 0
}

// waitClients waits until the server has n SSE clients: with n = 1 after a reconnect, the
// client is back and has been sent the replayed current state.
func (s *apiProc) waitClients(t *testing.T, n int) {
	t.Helper()
	watchPoll(t, fmt.Sprintf("%d SSE clients on %s", n, s.base), func() bool { return s.sseClients(t) == n })
}

func watchPoll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(watchWait); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
}

// watchAcquire makes holder the holder and returns its fence.
func watchAcquire(t *testing.T, env []string, holder string) uint64 {
	t.Helper()
	r := cli(t, append([]string{"SWARM_LEASE_HOLDER_ID=" + holder}, env...), "try-acquire", "--json")
	expectCode(t, r, 0, holder+" try-acquire")
	return decode[tryAcquireOut](t, r).Grant.Fence
}

func watchRelease(t *testing.T, env []string, holder string, fence uint64) {
	t.Helper()
	expectCode(t, cli(t, append([]string{"SWARM_LEASE_HOLDER_ID=" + holder}, env...), "release", strconv.FormatUint(fence, 10)),
		0, holder+" release")
}

// watchState is what these tests compare of a state.
type watchState struct {
	Exists   bool   `json:"exists"`
	Acquired bool   `json:"acquired"`
	HolderID string `json:"holder_id"`
	Fence    uint64 `json:"fence"`
}

func (w watchState) String() string {
	return fmt.Sprintf("{exists %v, acquired %v, holder %q, fence %d}", w.Exists, w.Acquired, w.HolderID, w.Fence)
}

func heldBy(holder string, fence uint64) watchState {
	return watchState{Exists: true, Acquired: true, HolderID: holder, Fence: fence}
}

func releasedAt(fence uint64) watchState { return watchState{Exists: true, Fence: fence} }

// watchInit creates the election and returns its first state. The tests start from an existing
// election because try-acquire on a missing one writes twice (create, then acquire), and a
// watcher may or may not catch the holderless record in between.
func watchInit(t *testing.T, env []string) watchState {
	t.Helper()
	r := cli(t, append([]string{"SWARM_LEASE_HOLDER_ID=init"}, env...), "init", "--json")
	expectCode(t, r, 0, "init")
	s := decode[inspectOut](t, r)
	return watchState{Exists: s.Exists, Acquired: s.Acquired, HolderID: s.HolderID, Fence: s.Fence}
}

// watchStream is a Go client's Watch, ranged in a goroutine.
type watchStream struct {
	ch     chan swarmlease.State
	errc   chan error
	cancel context.CancelFunc
	done   chan struct{}
}

func startWatchStream(t *testing.T, base string) *watchStream {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watchStream{ch: make(chan swarmlease.State, 100), errc: make(chan error, 1), cancel: cancel, done: make(chan struct{})}
	obs := swarmlease.Connect(base,
		swarmlease.WithBackoff(20*time.Millisecond, 200*time.Millisecond),
		swarmlease.WithInitialTimeout(watchWait))
	go func() {
		defer close(w.done)
		for s, err := range obs.Watch(ctx) {
			if err != nil {
				w.errc <- err
				return
			}
			w.ch <- s
		}
	}()
	t.Cleanup(func() { cancel(); <-w.done })
	return w
}

// expect checks that the client's next state is want.
func (w *watchStream) expect(t *testing.T, want watchState, what string) {
	t.Helper()
	select {
	case s := <-w.ch:
		got := watchState{Exists: s.Exists, Acquired: s.Acquired, HolderID: s.HolderID, Fence: s.Fence}
		if got != want {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
		t.Logf("%s: %v", what, got)
	case err := <-w.errc:
		t.Fatalf("%s: watch failed: %v", what, err)
	case <-time.After(watchWait):
		t.Fatalf("%s: no state within %v (want %v)", what, watchWait, want)
	}
}

// TestWatchClientAcrossRestarts: one serve process, killed and restarted on the same port, and
// stopped gracefully and restarted; the client yields each state exactly once.
func TestWatchClientAcrossRestarts(t *testing.T) {
	env := watchElection(t)
	created := watchInit(t, env)
	addr := watchFreeAddr(t)
	srv := startWatchServer(t, env, addr)
	w := startWatchStream(t, srv.base)
	w.expect(t, created, "current")
	srv.waitClients(t, 1)

	fa := watchAcquire(t, env, "a")
	w.expect(t, heldBy("a", fa), "a acquires")

	srv.kill(t)
	srv = startWatchServer(t, env, addr)
	srv.waitClients(t, 1) // back, and sent a's term again as "current"
	watchRelease(t, env, "a", fa)
	w.expect(t, releasedAt(fa), "a releases after a crash restart") // not a replay of a's term

	// A change while no server runs: the restarted server's "current" is that change.
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-srv.done
	fb := watchAcquire(t, env, "b")
	srv = startWatchServer(t, env, addr)
	w.expect(t, heldBy("b", fb), "b acquired while the server was down")
	srv.waitClients(t, 1)
	watchRelease(t, env, "b", fb)
	w.expect(t, releasedAt(fb), "b releases")
}

// watchProxy forwards to one backend at a time, as a Swarm VIP does; switchTo moves the
// clients by cutting their connections.
type watchProxy struct {
	*httptest.Server
	mu     sync.Mutex
	target *url.URL
}

func startWatchProxy(t *testing.T, target string) *watchProxy {
	p := &watchProxy{}
	p.setTarget(target)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		target := p.target
		p.mu.Unlock()
		rp := httputil.NewSingleHostReverseProxy(target)
		rp.FlushInterval = -1                    // pass every event on at once
		rp.ErrorLog = log.New(io.Discard, "", 0) // the cut streams are the point
		rp.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) }
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { p.CloseClientConnections(); p.Close() })
	return p
}

func (p *watchProxy) setTarget(base string) {
	u, err := url.Parse(base)
	if err != nil {
		panic(err)
	}
	p.mu.Lock()
	p.target = u
	p.mu.Unlock()
}

func (p *watchProxy) switchTo(base string) {
	p.setTarget(base)
	p.CloseClientConnections()
}

// TestWatchClientAcrossReplicas: two serve processes on one election, the client's base URL a
// proxy that moves it from one to the other and back. Both replay the same state on connect;
// the client yields it once.
func TestWatchClientAcrossReplicas(t *testing.T) {
	env := watchElection(t)
	fa := watchAcquire(t, env, "a")
	a := startWatchServer(t, env, watchFreeAddr(t))
	b := startWatchServer(t, env, watchFreeAddr(t))
	proxy := startWatchProxy(t, a.base)
	w := startWatchStream(t, proxy.URL)
	w.expect(t, heldBy("a", fa), "current from replica A")
	a.waitClients(t, 1)

	proxy.switchTo(b.base)
	a.waitClients(t, 0)
	b.waitClients(t, 1) // sent a's term again
	watchRelease(t, env, "a", fa)
	w.expect(t, releasedAt(fa), "a releases, seen through B")

	proxy.switchTo(a.base)
	b.waitClients(t, 0)
	a.waitClients(t, 1)
	fb := watchAcquire(t, env, "b")
	w.expect(t, heldBy("b", fb), "b acquires, seen through A")

	proxy.switchTo(b.base)
	a.waitClients(t, 0)
	b.waitClients(t, 1)
	watchRelease(t, env, "b", fb)
	w.expect(t, releasedAt(fb), "b releases, seen through B")
}

// watchCmd is one `lfp-swarm-lease watch` process with its stdout read line by line.
type watchCmd struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr *syncBuffer
	done   chan struct{}
}

func startWatchCmd(t *testing.T, args ...string) *watchCmd {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"watch"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOSTNAME=not-a-container"}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	w := &watchCmd{cmd: cmd, lines: make(chan string, 100), stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
		close(w.lines)
		_ = cmd.Wait() // after the last read, as StdoutPipe requires
		close(w.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-w.done
		if t.Failed() {
			t.Logf("watch stderr:\n%s", w.stderr.String())
		}
	})
	return w
}

func (w *watchCmd) next(t *testing.T, what string) string {
	t.Helper()
	select {
	case line, ok := <-w.lines:
		if !ok {
			t.Fatalf("%s: watch exited", what)
		}
		return line
	case <-time.After(watchWait):
		t.Fatalf("%s: no line within %v", what, watchWait)
	}
	return ""
}

func (w *watchCmd) expectJSON(t *testing.T, want watchState, what string) {
	t.Helper()
	line := w.next(t, what)
	var got watchState
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("%s: line %q is not a JSON object: %v", what, line, err)
	}
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// stop signals the process and returns its exit code.
func (w *watchCmd) stop(t *testing.T, sig os.Signal) int {
	t.Helper()
	if err := w.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.done:
	case <-time.After(watchWait):
		t.Fatalf("watch did not exit after %v", sig)
	}
	for range w.lines {
		t.Error("a line after the signal")
	}
	return w.cmd.ProcessState.ExitCode()
}

func TestWatchCommand(t *testing.T) {
	leasetest.Long(t, "watches an election through TTLs")
	t.Run("json", func(t *testing.T) {
		env := watchElection(t)
		created := watchInit(t, env)
		addr := watchFreeAddr(t)
		srv := startWatchServer(t, env, addr)
		w := startWatchCmd(t, "--json", srv.base)
		w.expectJSON(t, created, "current")
		srv.waitClients(t, 1)
		fa := watchAcquire(t, env, "a")
		w.expectJSON(t, heldBy("a", fa), "a acquires")
		srv.kill(t)
		srv = startWatchServer(t, env, addr)
		srv.waitClients(t, 1)
		watchRelease(t, env, "a", fa)
		w.expectJSON(t, releasedAt(fa), "a releases after a restart")
		if code := w.stop(t, syscall.SIGTERM); code != 0 {
			t.Fatalf("exit %d after SIGTERM, want 0", code)
		}
	})

	t.Run("human", func(t *testing.T) {
		env := watchElection(t)
		srv := startWatchServer(t, env, watchFreeAddr(t))
		w := startWatchCmd(t, srv.base)
		ns := strings.TrimPrefix(env[1], "SWARM_LEASE_NAMESPACE=")
		if got := w.next(t, "current"); got != ns+": the election does not exist" {
			t.Fatalf("current: %q", got)
		}
		created := watchInit(t, env)
		if got, want := w.next(t, "init"), fmt.Sprintf("%s: no holder, fence %d", ns, created.Fence); got != want {
			t.Fatalf("init: %q, want %q", got, want)
		}
		srv.waitClients(t, 1)
		fa := watchAcquire(t, env, "a")
		prefix := fmt.Sprintf("%s: held by a (node -, task -), fence %d, since ", ns, fa)
		if got := w.next(t, "a acquires"); !strings.HasPrefix(got, prefix) || !strings.Contains(got, ", expires ") {
			t.Fatalf("a acquires: %q, want %q...", got, prefix)
		}
		watchRelease(t, env, "a", fa)
		if got, want := w.next(t, "a releases"), fmt.Sprintf("%s: no holder, fence %d", ns, fa); got != want {
			t.Fatalf("a releases: %q, want %q", got, want)
		}
		if code := w.stop(t, os.Interrupt); code != 0 {
			t.Fatalf("exit %d after SIGINT, want 0", code)
		}
	})

	t.Run("initial timeout", func(t *testing.T) {
		dead := "http://" + watchFreeAddr(t)
		start := time.Now()
		r := cli(t, nil, "watch", "--initial-timeout", "1s", dead)
		took := time.Since(start)
		expectCode(t, r, 5, "watch of a controller that is not there")
		for _, want := range []string{"lfp-swarm-lease: cannot reach the controller at " + dead + " (connection refused)", "no state within --initial-timeout 1s"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr %q does not mention %q", r.stderr, want)
			}
		}
		if took > watchWait {
			t.Errorf("gave up after %v", took)
		}
		r = cli(t, nil, "watch", "--json", "--initial-timeout", "200ms", dead)
		expectCode(t, r, 5, "watch --json of a controller that is not there")
		var out struct {
			Error string `json:"error"`
			Code  string `json:"code"`
			Exit  int    `json:"exit_code"`
		}
		if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &out) != nil ||
			out.Exit != 5 || out.Code != "server_unreachable" || !strings.Contains(out.Error, "--initial-timeout 200ms") {
			t.Fatalf("stdout %q, want one JSON error line", r.stdout)
		}
	})

	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{
			{"watch"},
			{"watch", "http://user:secret@x"},
			{"watch", "ftp://x"},
			{"watch", "http://x", "http://y"},
			{"watch", "--initial-timeout", "0s", "http://x"},
		} {
			expectCode(t, cli(t, nil, args...), 2, strings.Join(args, " "))
		}
	})
}
