package e2e

// Benchmarks of the HTTP API's event stream (GET /v1/events), recorded in BENCHMARKS.md ("HTTP
// API and SSE"):
//
//   - BenchmarkSSEPropagation/store={file,swarm}: a store write → the SSE `change` event it
//     causes, received by one client of a real `lfp-swarm-lease serve` process over loopback.
//     The writer is a lease.Election in the benchmark process on the same store (the file
//     store's directory, or the test Swarm), alternating TryAcquire (a new term: fence + 1) and
//     Release (the lease ends): every write is one change. One change per iteration.
//   - BenchmarkSSEFanout/store={file,swarm}: the same writes with sseFanoutClients SSE clients
//     on one serve process, held by a second process (this test binary re-executed as a load
//     generator, see sseLoadGenEnv). It reports the server's memory (/proc/<pid>/status VmRSS and
//     VmHWM) and, per change, the latency of every client and of the last one. One change (one
//     broadcast to every client) per iteration.
//
// Latencies are measured from the start of the write call (taken just before TryAcquire or
// Release is called) to the moment the client's read returned the event; the propagation
// benchmark also reports them from the write call's return ("done-" metrics), which on the file
// store can be later than the event: inotify fires at the rename, before the directory's fsync
// returns. Every percentile is by nearest rank (sseNearestRank). The writes are spaced by a
// random pause (timer stopped) so that they fall at random phases of the server's poll and
// keep-alive timers; ns/op is therefore not a figure of interest.
//
// These are benchmarks, not tests: `go test` without -bench runs none of them. The Swarm
// variants skip without a test Swarm (leasetest.SwarmHost; they fail instead when CI=true).
//
// serve_test.go's startServe and listenURL take a *testing.T, which a benchmark does not have;
// sseStartServe is the same for a testing.TB. dialEvents (serve_test.go) is the propagation
// benchmark's client; the fan-out's clients are the load generator's raw-socket readers.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
)

// ssePoll is the serve process's poll interval in these benchmarks: the default, set explicitly.
// Without store notifications a change would wait for the next poll: up to ssePoll.
const ssePoll = time.Second

// ssePropagationPause bounds the random pause before each write of BenchmarkSSEPropagation.
const ssePropagationPause = 100 * time.Millisecond

// sseFanoutClients is how many SSE clients BenchmarkSSEFanout connects to one server (the
// server's default limit is 20,000).
const sseFanoutClients = 10000

// sseFanoutPause and sseFanoutJitter make the pause between two broadcasts: the fixed part
// lets both processes settle (garbage collection of the last broadcast's frames), the random
// part decorrelates the writes from the server's timers.
const (
	sseFanoutPause  = 300 * time.Millisecond
	sseFanoutJitter = 500 * time.Millisecond
)

// sseFanoutWait bounds how long one broadcast may take to reach every client.
const sseFanoutWait = 30 * time.Second

// sseStore is one store of the SSE benchmarks: the environment that points a serve process at
// it, and the benchmark's own handle on the same store.
type sseStore struct {
	name  string
	env   []string
	store lease.Store
}

// sseStores are the stores the SSE benchmarks run on; each constructor is called inside its
// sub-benchmark, so that a missing test Swarm skips only the Swarm variant.
var sseStores = []struct {
	name string
	mk   func(testing.TB) sseStore
}{{"file", sseFileStore}, {"swarm", sseSwarmStore}}

// sseFileStore is a new file-store directory.
func sseFileStore(tb testing.TB) sseStore {
	dir := filepath.Join(tb.TempDir(), "store")
	s, err := filestore.New(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return sseStore{name: "file", env: []string{"SWARM_LEASE_STORE=file://" + dir}, store: s}
}

// sseSwarmStore is the test Swarm (skips without one).
func sseSwarmStore(tb testing.TB) sseStore {
	host := leasetest.SwarmHost(tb)
	s, err := swarmstore.NewFromEnv(client.WithHost(host))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return sseStore{name: "swarm", env: []string{"SWARM_LEASE_STORE=swarm", "DOCKER_HOST=" + host}, store: s}
}

// sseKey names one change as its event shows it: the fence and whether the lease is held.
type sseKey struct {
	fence    uint64
	acquired bool
}

func (k sseKey) String() string { return fmt.Sprintf("fence %d acquired %v", k.fence, k.acquired) }

// sseWriter is the benchmark's contender: each step is one write that changes the election.
type sseWriter struct {
	e     *lease.Election
	fence uint64 // of the current term while held
	held  bool
}

// newSSEWriter opens namespace ns on st as holder "writer"; the election is destroyed when the
// benchmark ends.
func newSSEWriter(tb testing.TB, st sseStore, ns string) *sseWriter {
	e, err := lease.New(st.store, ns, lease.Identity{HolderID: "writer", NodeID: "bench-node", TaskID: "bench-task"})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = e.Destroy(ctx)
	})
	return &sseWriter{e: e}
}

// step acquires the lease if the writer does not hold it and releases it otherwise. It returns
// the change the write makes and the times just before the call and just after its return.
func (w *sseWriter) step(tb testing.TB) (key sseKey, start, done time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if w.held {
		start = time.Now()
		err := w.e.Release(ctx, w.fence)
		done = time.Now()
		if err != nil {
			tb.Fatalf("release %d: %v", w.fence, err)
		}
		w.held = false
		return sseKey{fence: w.fence, acquired: false}, start, done
	}
	start = time.Now()
	res, err := w.e.TryAcquire(ctx)
	done = time.Now()
	if err != nil || !res.Acquired {
		tb.Fatalf("try-acquire: %+v, %v", res, err)
	}
	w.fence, w.held = res.Grant.Fence, true
	return sseKey{fence: w.fence, acquired: true}, start, done
}

// sseServeEnv is the environment of a serve process for election ns on st: a free port on
// loopback and the poll interval ssePoll.
func sseServeEnv(st sseStore, ns string) []string {
	return append([]string{
		"SWARM_LEASE_NAMESPACE=" + ns,
		"SWARM_LEASE_LISTEN=127.0.0.1:0",
		"SWARM_LEASE_DEFAULT_POLL_MS=" + strconv.FormatInt(ssePoll.Milliseconds(), 10),
		// Every client of the fan-out comes from 127.0.0.1: one client address for the
		// per-client bound, which by default is a quarter of all connections.
		"SWARM_LEASE_MAX_CONNECTIONS_PER_CLIENT=" + strconv.Itoa(sseFanoutClients+100),
	}, st.env...)
}

// sseServeProc is one `lfp-swarm-lease serve` process.
type sseServeProc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{} // closed when it exited
	base string        // http://127.0.0.1:PORT
}

// sseStartServe starts `lfp-swarm-lease serve` with env (as serve_test.go's startServe does, for
// a testing.TB) and returns it once it listens and has read the election (GET /v1/state
// answered). It is SIGKILLed when the benchmark ends if it still runs.
func sseStartServe(tb testing.TB, env []string) *sseServeProc {
	tb.Helper()
	cmd := exec.Command(binary, "serve")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOSTNAME=not-a-container"}, env...)
	p := &sseServeProc{cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if tb.Failed() {
			tb.Logf("serve output:\n%s", p.out.String())
		}
	})
	for deadline := time.Now().Add(15 * time.Second); p.base == ""; {
		if m := listeningPattern.FindStringSubmatch(p.out.String()); m != nil {
			p.base = "http://" + m[1]
			break
		}
		select {
		case <-p.done:
			tb.Fatalf("serve exited (%d) before it listened:\n%s", cmd.ProcessState.ExitCode(), p.out.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("serve did not log its listen address within 15 s:\n%s", p.out.String())
		}
		time.Sleep(10 * time.Millisecond) // poll interval of the log
	}
	resp, err := http.Get(p.base + "/v1/state")
	if err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET /v1/state: %s", resp.Status)
	}
	return p
}

// sseNearestRank returns the p-th percentile of sorted by the nearest-rank method: the value of
// rank ⌈p/100 × n⌉ (for fewer than 100 values, p99 is the largest).
func sseNearestRank(sorted []time.Duration, p int) time.Duration {
	rank := min(max((p*len(sorted)+99)/100, 1), len(sorted))
	return sorted[rank-1]
}

// sseReportPercentiles reports the p50, p99 and maximum of ds in milliseconds, as
// prefix+"p50-ms" and so on, and logs them.
func sseReportPercentiles(b *testing.B, ds []time.Duration, prefix string) {
	if len(ds) == 0 {
		return
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(sseNearestRank(sorted, 50)), prefix+"p50-ms")
	b.ReportMetric(ms(sseNearestRank(sorted, 99)), prefix+"p99-ms")
	b.ReportMetric(ms(sorted[len(sorted)-1]), prefix+"max-ms")
	b.Logf("%s%d values: min %.2f ms, p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms", prefix, len(ds),
		ms(sorted[0]), ms(sseNearestRank(sorted, 50)), ms(sseNearestRank(sorted, 90)), ms(sseNearestRank(sorted, 99)), ms(sorted[len(sorted)-1]))
}

// --- propagation -------------------------------------------------------------------------------

// BenchmarkSSEPropagation measures store write → SSE `change` event at one client of a serve
// process (goal on the Swarm store: p99 ≤ 100 ms). It reports p50-ms/p99-ms/max-ms from the
// write's start, done-p50-ms/done-p99-ms/done-max-ms from the write's return,
// write-p50-ms/write-p99-ms/write-max-ms for the write itself, and poll-ms: the server's poll
// interval, the bound of a change that no notification announces.
func BenchmarkSSEPropagation(b *testing.B) {
	for _, s := range sseStores {
		b.Run("store="+s.name, func(b *testing.B) { benchSSEPropagation(b, s.mk(b)) })
	}
}

func benchSSEPropagation(b *testing.B, st sseStore) {
	ns := leasetest.Namespace(b)
	w := newSSEWriter(b, st, ns)
	w.step(b) // creates the election (on Swarm, its anchor service) before the server starts
	srv := sseStartServe(b, sseServeEnv(st, ns))
	c, err := dialEvents(srv.base)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.close)
	if f := sseNextEvent(b, c, 10*time.Second); f.event != "current" {
		b.Fatalf("first event %q, want current", f.event)
	}
	// Warm-up: one change untimed (the writer's and the client's connections are open).
	key, _, _ := w.step(b)
	sseAwaitChange(b, c, key, 10*time.Second)

	var fromStart, fromDone, writes []time.Duration
	for b.Loop() {
		b.StopTimer()
		time.Sleep(rand.N(ssePropagationPause)) // the write's phase against the server's timers
		b.StartTimer()
		key, start, done := w.step(b)
		f := sseAwaitChange(b, c, key, 10*time.Second)
		fromStart = append(fromStart, f.at.Sub(start))
		fromDone = append(fromDone, f.at.Sub(done))
		writes = append(writes, done.Sub(start))
	}
	sseReportPercentiles(b, fromStart, "")
	sseReportPercentiles(b, fromDone, "done-")
	sseReportPercentiles(b, writes, "write-")
	b.ReportMetric(float64(ssePoll.Milliseconds()), "poll-ms")
}

// sseNextEvent returns the next event of c, skipping comments; it fails after timeout or at the
// end of the stream.
func sseNextEvent(tb testing.TB, c *sseClient, timeout time.Duration) sseFrame {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		f, ok := c.nextWithin(time.Until(deadline))
		if !ok {
			tb.Fatalf("no SSE event within %v (stream ended: %v, err: %v)", timeout, c.ended(), c.err())
		}
		if f.event != "" {
			return f
		}
	}
}

// sseAwaitChange returns the next event of c, which must be the `change` event of key.
func sseAwaitChange(tb testing.TB, c *sseClient, key sseKey, timeout time.Duration) sseFrame {
	tb.Helper()
	f := sseNextEvent(tb, c, timeout)
	var s apiState
	if err := json.Unmarshal([]byte(f.data), &s); err != nil {
		tb.Fatalf("event %q data %q: %v", f.event, f.data, err)
	}
	if f.event != "change" || s.Fence != key.fence || s.Acquired != key.acquired {
		tb.Fatalf("got event %q %s, want the change %s", f.event, s, key)
	}
	return f
}

// --- fan-out -----------------------------------------------------------------------------------

// BenchmarkSSEFanout measures one serve process with sseFanoutClients SSE clients held by a
// second process on loopback (goals: server RSS ≤ 150 MB; write → the last client received the
// change, p99 ≤ 200 ms). Metrics:
//
//   - clients: the connected clients (each checked to receive every change);
//   - base-rss-MB: the server's VmRSS before any client connected; idle-rss-MB: with every
//     client connected, 3 s after the last connected, before the first change; after-rss-MB: after the last change; hwm-MB: VmHWM
//     (peak RSS) at the end;
//   - last-p50-ms/last-p99-ms/last-max-ms: per change, write start → the last client's receipt;
//   - first-p50-ms/first-p99-ms: per change, write start → the first client's receipt;
//   - client-p50-ms/client-p99-ms/client-max-ms: write start → receipt, over every client of
//     every change;
//   - server-cpu-ms/change, loadgen-cpu-ms/change: the CPU time (user + system, from
//     /proc/<pid>/stat in 10 ms ticks) each process used from just before a write until the
//     load generator answered that every client had the change, per change.
//
// Both processes and the benchmark share this machine's cores; RLIMIT_NOFILE is raised to its
// hard limit in the benchmark process before the server starts (the server inherits it) and in
// the load generator.
func BenchmarkSSEFanout(b *testing.B) {
	for _, s := range sseStores {
		b.Run("store="+s.name, func(b *testing.B) { benchSSEFanout(b, s.mk(b)) })
	}
}

func benchSSEFanout(b *testing.B, st sseStore) {
	if err := sseRaiseNoFile(sseFanoutClients + 1000); err != nil {
		b.Fatal(err)
	}
	ns := leasetest.Namespace(b)
	w := newSSEWriter(b, st, ns)
	w.step(b)
	srv := sseStartServe(b, sseServeEnv(st, ns))
	pid := srv.cmd.Process.Pid
	baseMem := sseProcMem(b, pid)

	connectStart := time.Now()
	gen := sseStartLoadGen(b, strings.TrimPrefix(srv.base, "http://"), sseFanoutClients)
	b.Logf("%d clients connected in %v", sseFanoutClients, time.Since(connectStart).Round(time.Millisecond))
	if got := sseServerMetric(b, srv.base, "lfp_swarm_lease_sse_clients"); got != sseFanoutClients {
		b.Fatalf("the server counts %v SSE clients, want %d", got, sseFanoutClients)
	}
	idleCPU := sseProcCPU(b, pid)
	time.Sleep(3 * time.Second) // the connection burst settles before the idle reading
	idleCPU = sseProcCPU(b, pid) - idleCPU
	idleMem := sseProcMem(b, pid)
	idleRuntime := sseServerRuntime(b, srv.base)

	// Warm-up: one broadcast untimed.
	key, _, _ := w.step(b)
	gen.await(b, key)

	genPid := gen.cmd.Process.Pid
	var last, first, all []time.Duration
	var serverCPU, genCPU time.Duration
	for b.Loop() {
		b.StopTimer()
		time.Sleep(sseFanoutPause + rand.N(sseFanoutJitter)) // settle; the write's phase against the server's timers
		b.StartTimer()
		cpu0, genCPU0 := sseProcCPU(b, pid), sseProcCPU(b, genPid)
		key, start, _ := w.step(b)
		arrivals := gen.await(b, key)
		serverCPU += sseProcCPU(b, pid) - cpu0
		genCPU += sseProcCPU(b, genPid) - genCPU0
		var lo, hi time.Duration
		for i, at := range arrivals {
			d := time.Duration(at - start.UnixNano())
			all = append(all, d)
			if i == 0 || d < lo {
				lo = d
			}
			hi = max(hi, d)
		}
		first, last = append(first, lo), append(last, hi)
	}
	afterMem := sseProcMem(b, pid)

	b.ReportMetric(float64(sseFanoutClients), "clients")
	b.ReportMetric(baseMem.rssMB(), "base-rss-MB")
	b.ReportMetric(idleMem.rssMB(), "idle-rss-MB")
	b.ReportMetric(afterMem.rssMB(), "after-rss-MB")
	b.ReportMetric(afterMem.hwmMB(), "hwm-MB")
	sseReportPercentiles(b, last, "last-")
	sseReportPercentiles(b, first, "first-")
	sseReportPercentiles(b, all, "client-")
	if len(last) > 0 {
		perChange := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(len(last)) }
		b.ReportMetric(perChange(serverCPU), "server-cpu-ms/change")
		b.ReportMetric(perChange(genCPU), "loadgen-cpu-ms/change")
	}
	lastMs := make([]string, len(last))
	for i, d := range last {
		lastMs[i] = strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
	}
	b.Logf("last client, per change (ms, in order): %s", strings.Join(lastMs, " "))
	b.Logf("server CPU while idle with %d clients (keep-alives, polls): %v over 3 s", sseFanoutClients, idleCPU)
	b.Logf("server memory: before clients %s; %d clients idle %s; after %d changes %s", baseMem, sseFanoutClients, idleMem, len(last), afterMem)
	b.Logf("server runtime: idle %s; at the end %s", idleRuntime, sseServerRuntime(b, srv.base))
	b.Logf("load generator: %s", gen.status(b))
}

// sseRaiseNoFile raises this process's soft RLIMIT_NOFILE to its hard limit, which must be at
// least need. Processes started afterwards inherit it (Go restores the original soft limit in
// children only when it raised the limit itself at start-up, not after syscall.Setrlimit).
func sseRaiseNoFile(need uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	if lim.Max < need {
		return fmt.Errorf("RLIMIT_NOFILE hard limit %d is below the %d file descriptors needed", lim.Max, need)
	}
	lim.Cur = lim.Max
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
}

// sseMem is a process's memory as /proc/<pid>/status reports it, in kB.
type sseMem struct{ rss, hwm uint64 }

func (m sseMem) rssMB() float64 { return float64(m.rss) / 1024 }
func (m sseMem) hwmMB() float64 { return float64(m.hwm) / 1024 }
func (m sseMem) String() string {
	return fmt.Sprintf("VmRSS %.1f MB, VmHWM %.1f MB", m.rssMB(), m.hwmMB())
}

// sseProcMem reads VmRSS and VmHWM of process pid.
func sseProcMem(tb testing.TB, pid int) sseMem {
	tb.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	var m sseMem
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *uint64
		switch name {
		case "VmRSS":
			dst = &m.rss
		case "VmHWM":
			dst = &m.hwm
		default:
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			tb.Fatalf("/proc/%d/status: %q: %v", pid, line, err)
		}
		*dst = kb
	}
	if m.rss == 0 || m.hwm == 0 {
		tb.Fatalf("/proc/%d/status without VmRSS or VmHWM:\n%s", pid, data)
	}
	return m
}

// sseClockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux).
const sseClockTick = 10 * time.Millisecond

// sseProcCPU returns the CPU time (user + system) process pid has used.
func sseProcCPU(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatal(err)
	}
	// The command name, field 2, is in parentheses and may hold spaces: count after it.
	rest := string(data[bytes.LastIndexByte(data, ')')+1:])
	fields := strings.Fields(rest) // fields[0] is field 3 (state); utime is 14, stime 15
	if len(fields) < 13 {
		tb.Fatalf("/proc/%d/stat: %q", pid, data)
	}
	var ticks uint64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			tb.Fatalf("/proc/%d/stat: %q: %v", pid, data, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * sseClockTick
}

// sseScrape returns the unlabelled samples of the server's /metrics, by name.
func sseScrape(tb testing.TB, base string) map[string]float64 {
	tb.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET /metrics: %s, %v", resp.Status, err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] = v
		}
	}
	return out
}

// sseServerMetric returns the unlabelled metric name of the server's /metrics.
func sseServerMetric(tb testing.TB, base, name string) float64 {
	tb.Helper()
	v, ok := sseScrape(tb, base)[name]
	if !ok {
		tb.Fatalf("/metrics lacks %s", name)
	}
	return v
}

// sseServerRuntime summarises the server's Go runtime metrics.
func sseServerRuntime(tb testing.TB, base string) string {
	m := sseScrape(tb, base)
	mb := func(name string) float64 { return m[name] / (1 << 20) }
	return fmt.Sprintf("%.0f goroutines; heap in use %.1f MB, stacks %.1f MB, Go runtime total (sys) %.1f MB; %.0f SSE clients, %.0f dropped",
		m["go_goroutines"], mb("go_memstats_heap_inuse_bytes"), mb("go_memstats_stack_inuse_bytes"), mb("go_memstats_sys_bytes"),
		m["lfp_swarm_lease_sse_clients"], m["lfp_swarm_lease_sse_clients_dropped_total"])
}

// --- load generator ----------------------------------------------------------------------------

// sseLoadGenEnv, set to "ADDRESS CLIENTS", makes this test binary the fan-out load generator
// instead of running tests (see init): it connects CLIENTS raw-socket SSE readers to
// http://ADDRESS/v1/events and serves its parent over a pipe pair. Commands arrive on stdin, one
// a line; answers go to file descriptor 3, one a line:
//
//   - at start it answers "ready N" once every client has its `current` event (or "error MSG");
//   - "await FENCE ACQUIRED TIMEOUT_MS" answers, once every client has received the change
//     event with that fence and acquired (or after the timeout), "arrivals MISSING DISCONNECTED
//     T1 … TN": per client the wall-clock time (Unix ns) its read returned the event, 0 if not
//     received; MISSING of them not received; DISCONNECTED clients lost since start;
//   - "status" answers "status TEXT" (the generator's own memory and client counts);
//   - at the end of stdin it exits.
//
// Wall-clock times are comparable with the benchmark's time.Now().UnixNano() on the same host.
const sseLoadGenEnv = "LFP_SWARM_LEASE_SSE_LOADGEN"

// sseLoadGenDialers is how many connections the load generator opens at once.
const sseLoadGenDialers = 64

func init() {
	spec := os.Getenv(sseLoadGenEnv)
	if spec == "" {
		return
	}
	os.Exit(sseLoadGenMain(spec))
}

// sseLoadGenMain runs the load generator (see sseLoadGenEnv) and returns its exit code.
func sseLoadGenMain(spec string) int {
	report := os.NewFile(3, "report")
	fail := func(err error) int {
		fmt.Fprintf(report, "error %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		fmt.Fprintln(os.Stderr, "load generator:", err)
		return 1
	}
	addr, count, _ := strings.Cut(spec, " ")
	n, err := strconv.Atoi(count)
	if err != nil || n <= 0 {
		return fail(fmt.Errorf("bad %s %q", sseLoadGenEnv, spec))
	}
	if err := sseRaiseNoFile(uint64(n) + 100); err != nil {
		return fail(err)
	}
	g := &sseLoadGen{n: n, sets: map[sseKey]*sseArrivals{}}
	if err := g.connect(addr); err != nil {
		return fail(err)
	}
	fmt.Fprintf(report, "ready %d\n", n)

	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 4 && f[0] == "await":
			fence, err1 := strconv.ParseUint(f[1], 10, 64)
			acquired, err2 := strconv.ParseBool(f[2])
			ms, err3 := strconv.Atoi(f[3])
			if err := errors.Join(err1, err2, err3); err != nil {
				return fail(fmt.Errorf("bad command %q: %w", sc.Text(), err))
			}
			times, missing := g.await(sseKey{fence, acquired}, time.Duration(ms)*time.Millisecond)
			var sb strings.Builder
			sb.Grow(20 * (len(times) + 3))
			fmt.Fprintf(&sb, "arrivals %d %d", missing, g.disconnected.Load())
			for _, t := range times {
				sb.WriteByte(' ')
				sb.WriteString(strconv.FormatInt(t, 10))
			}
			sb.WriteByte('\n')
			if _, err := io.WriteString(report, sb.String()); err != nil {
				return 1
			}
		case len(f) == 1 && f[0] == "status":
			var m sseMem
			if data, err := os.ReadFile("/proc/self/status"); err == nil {
				for _, line := range strings.Split(string(data), "\n") {
					if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
						m.rss, _ = strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
					}
					if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
						m.hwm, _ = strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
					}
				}
			}
			fmt.Fprintf(report, "status %d clients, %d disconnected; %s\n", n, g.disconnected.Load(), m)
		default:
			return fail(fmt.Errorf("bad command %q", sc.Text()))
		}
	}
	return 0
}

// sseLoadGen holds the load generator's clients and what they received.
type sseLoadGen struct {
	n            int
	disconnected atomic.Int64 // clients whose stream ended after their `current` event

	mu   sync.Mutex
	sets map[sseKey]*sseArrivals
}

// sseArrivals is when each client received one change.
type sseArrivals struct {
	times    []int64 // Unix ns by client; 0 until received
	received int
	all      chan struct{} // closed once every client received it
}

// arrivals returns key's set, creating it; g.mu must be held.
func (g *sseLoadGen) arrivals(key sseKey) *sseArrivals {
	a := g.sets[key]
	if a == nil {
		a = &sseArrivals{times: make([]int64, g.n), all: make(chan struct{})}
		g.sets[key] = a
	}
	return a
}

// record notes that client i's read at time at (Unix ns) returned the change key.
func (g *sseLoadGen) record(key sseKey, i int, at int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	a := g.arrivals(key)
	if a.times[i] != 0 {
		return
	}
	a.times[i] = at
	a.received++
	if a.received == g.n {
		close(a.all)
	}
}

// await waits until every client received key, at most timeout, and returns (and forgets) the
// arrival times with the number of clients that did not receive it.
func (g *sseLoadGen) await(key sseKey, timeout time.Duration) ([]int64, int) {
	g.mu.Lock()
	a := g.arrivals(key)
	g.mu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-a.all:
	case <-t.C:
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.sets, key)
	return slices.Clone(a.times), g.n - a.received
}

// connect opens every client, sseLoadGenDialers at a time, and returns once each has received
// its `current` event, or with the first failure.
func (g *sseLoadGen) connect(addr string) error {
	ready := make(chan error, g.n)
	jobs := make(chan int)
	go func() {
		for i := range g.n {
			jobs <- i
		}
		close(jobs)
	}()
	request := []byte("GET /v1/events HTTP/1.1\r\nHost: " + addr + "\r\nAccept: text/event-stream\r\n\r\n")
	for range sseLoadGenDialers {
		go func() {
			d := net.Dialer{Timeout: 30 * time.Second}
			for i := range jobs {
				conn, err := d.Dial("tcp", addr)
				if err == nil {
					_, err = conn.Write(request)
				}
				if err != nil {
					ready <- fmt.Errorf("client %d: %w", i, err)
					continue
				}
				go g.read(i, conn, ready)
			}
		}()
	}
	deadline := time.NewTimer(5 * time.Minute)
	defer deadline.Stop()
	for range g.n {
		select {
		case err := <-ready:
			if err != nil {
				return err
			}
		case <-deadline.C:
			return errors.New("the clients did not all connect within 5 minutes")
		}
	}
	return nil
}

// read is client i: a minimal SSE reader on a raw HTTP/1.1 connection. Lines ending in "\r" are
// HTTP framing (the status line, headers, chunk sizes and chunk ends: the server sends the
// stream chunked), never SSE lines, whose JSON data holds no raw CR. It reports on ready once:
// nil at its `current` event, or why it failed before. Every `change` event is recorded with
// the time its read returned.
func (g *sseLoadGen) read(i int, conn net.Conn, ready chan<- error) {
	defer conn.Close()
	const (
		evNone = iota
		evCurrent
		evChange
		evOther
	)
	buf := make([]byte, 2048)
	var partial []byte // a line split across reads
	status, isReady := false, false
	event := evNone
	for {
		n, err := conn.Read(buf)
		now := time.Now().UnixNano()
		data := buf[:n]
		for len(data) > 0 {
			j := bytes.IndexByte(data, '\n')
			if j < 0 {
				partial = append(partial, data...)
				break
			}
			line := data[:j]
			data = data[j+1:]
			if len(partial) > 0 {
				partial = append(partial, line...)
				line = partial
			}
			partial = partial[:0] // line keeps the bytes: nothing appends to partial before the next line
			switch {
			case !status:
				if !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
					ready <- fmt.Errorf("client %d: status line %q", i, line)
					return
				}
				status = true
			case len(line) > 0 && line[len(line)-1] == '\r': // HTTP framing
			case len(line) == 0:
				event = evNone
			case bytes.HasPrefix(line, []byte("event: ")):
				switch string(line[len("event: "):]) {
				case "current":
					event = evCurrent
				case "change":
					event = evChange
				default:
					event = evOther
				}
			case bytes.HasPrefix(line, []byte("data: ")):
				switch event {
				case evCurrent:
					if !isReady {
						isReady = true
						ready <- nil
					}
				case evChange:
					if key, ok := sseParseKey(line); ok {
						g.record(key, i, now)
					} else {
						fmt.Fprintf(os.Stderr, "load generator: client %d: unparsable change %q\n", i, line)
					}
				}
			}
		}
		if err != nil {
			if isReady {
				g.disconnected.Add(1)
				fmt.Fprintf(os.Stderr, "load generator: client %d disconnected: %v\n", i, err)
			} else {
				ready <- fmt.Errorf("client %d: %w before its current event", i, err)
			}
			return
		}
	}
}

// sseParseKey reads the fence and acquired fields of an event's data line.
func sseParseKey(line []byte) (sseKey, bool) {
	var key sseKey
	_, rest, ok := bytes.Cut(line, []byte(`"fence":`))
	if !ok {
		return key, false
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	fence, err := strconv.ParseUint(string(rest[:end]), 10, 64)
	if err != nil {
		return key, false
	}
	key.fence = fence
	key.acquired = bytes.Contains(line, []byte(`"acquired":true`))
	return key, true
}

// sseLoadGenProc is the load generator process as the benchmark drives it.
type sseLoadGenProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	answer *os.File // the read end of the generator's file descriptor 3
	r      *bufio.Reader
	out    *syncBuffer
}

// sseStartLoadGen re-executes this test binary as the load generator with clients clients of
// addr and returns once they are all connected. It is stopped when the benchmark ends, before
// the server (cleanups run last-in first-out).
func sseStartLoadGen(tb testing.TB, addr string, clients int) *sseLoadGenProc {
	tb.Helper()
	self, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	answerR, answerW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), sseLoadGenEnv+"="+addr+" "+strconv.Itoa(clients))
	cmd.ExtraFiles = []*os.File{answerW}
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	answerW.Close()
	g := &sseLoadGenProc{cmd: cmd, stdin: stdin, answer: answerR, r: bufio.NewReaderSize(answerR, 1<<20), out: out}
	tb.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		answerR.Close()
		if tb.Failed() {
			tb.Logf("load generator output:\n%s", out.String())
		}
	})
	if line := g.answerWithin(tb, 5*time.Minute); line != "ready "+strconv.Itoa(clients) {
		tb.Fatalf("load generator: %s\n%s", line, out.String())
	}
	return g
}

// answerWithin reads the generator's next answer line (without its newline).
func (g *sseLoadGenProc) answerWithin(tb testing.TB, timeout time.Duration) string {
	tb.Helper()
	if err := g.answer.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		tb.Fatal(err)
	}
	line, err := g.r.ReadString('\n')
	if err != nil {
		tb.Fatalf("load generator: no answer: %v\n%s", err, g.out.String())
	}
	return strings.TrimSuffix(line, "\n")
}

// command sends one command line to the generator.
func (g *sseLoadGenProc) command(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if _, err := fmt.Fprintf(g.stdin, format+"\n", args...); err != nil {
		tb.Fatalf("load generator: %v\n%s", err, g.out.String())
	}
}

// await waits until every client received the change key and returns their arrival times
// (Unix ns). It fails if a client did not receive it within sseFanoutWait or any was lost.
func (g *sseLoadGenProc) await(tb testing.TB, key sseKey) []int64 {
	tb.Helper()
	g.command(tb, "await %d %v %d", key.fence, key.acquired, sseFanoutWait.Milliseconds())
	f := strings.Fields(g.answerWithin(tb, sseFanoutWait+time.Minute))
	if len(f) < 3 || f[0] != "arrivals" {
		tb.Fatalf("load generator answered %.200q to await", strings.Join(f, " "))
	}
	if f[1] != "0" || f[2] != "0" {
		tb.Fatalf("change %s: %s of %d clients did not receive it within %v; %s disconnected since start\n%s",
			key, f[1], len(f)-3, sseFanoutWait, f[2], lastLines(g.out.String(), 20))
	}
	times := make([]int64, len(f)-3)
	for i, s := range f[3:] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			tb.Fatal(err)
		}
		times[i] = v
	}
	return times
}

// status returns the generator's description of itself.
func (g *sseLoadGenProc) status(tb testing.TB) string {
	tb.Helper()
	g.command(tb, "status")
	return strings.TrimPrefix(g.answerWithin(tb, time.Minute), "status ")
}
