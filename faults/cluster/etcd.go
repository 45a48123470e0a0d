package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/internal/netns"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore/etcdtest"
	"github.com/regbo/lfp-swarm-lease/timing"
)

// The ports of every member, on its own address: each member has a namespace of its own.
const (
	EtcdClientPort = 2379
	EtcdPeerPort   = 2380
)

// Etcd timing: etcd's defaults (heartbeat 100 ms, election timeout 1 s), which a loaded
// two-core machine keeps without spurious elections.
const (
	etcdHeartbeat = 100 * time.Millisecond
	etcdElection  = time.Second
)

// Etcd is a three-member etcd cluster of separate etcd processes (Debian's etcd-server), member
// n in node n's network namespace at Addr(n), wired like the Swarm managers (Cluster): a bridge
// in a hub namespace, so that Partition cuts a member — and every process in its namespace —
// off the others, and nothing is added to the host's network. The test process reaches the
// members through Dial (a connection made inside a namespace); contenders started in a
// member's namespace (NetNS) reach all three over the bridge, like processes on that member's
// host. Every process is stopped by its PID; all state lives under Dir (Root/run-<pid>), swept
// like a Swarm run's when its process died.
type Etcd struct {
	// Dir is the run directory; every member's data and log live below it.
	Dir   string
	id    string
	bin   string
	token string
	log   func(format string, args ...any)

	mu      sync.Mutex
	members [Nodes + 1]*node // 1-based
	ids     [Nodes + 1]uint64
	closed  bool
}

// EtcdPrerequisites reports what this machine lacks to build an etcd cluster: root, ip,
// nsenter, sysctl and the etcd server binary. nil means one can be started.
func EtcdPrerequisites() error {
	missing := lacking("network namespaces need it", "ip", "nsenter", "sysctl")
	if _, err := etcdtest.LookBinary(); err != nil {
		missing = append(missing, "etcd (apt-get install etcd-server, or set "+etcdtest.BinaryEnv+")")
	}
	if len(missing) > 0 {
		return fmt.Errorf("an etcd fault-test cluster needs %s", strings.Join(missing, ", "))
	}
	return nil
}

// StartEtcd sweeps the leftovers of dead runs, builds the namespaces and starts the three
// members, and returns once every member answers a linearizable read. On error everything it
// created is removed. A process runs one cluster (of either kind) at a time.
func StartEtcd(ctx context.Context, opts Options) (e *Etcd, err error) {
	if err := EtcdPrerequisites(); err != nil {
		return nil, err
	}
	dir, id, logf, err := startRun(opts)
	if err != nil {
		return nil, err
	}
	bin, _ := etcdtest.LookBinary()
	e = &Etcd{Dir: dir, id: id, bin: bin, log: logf, token: fmt.Sprintf("lfpf-%s-%d", id, time.Now().UnixNano())}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.Close())
			e = nil
		}
	}()
	began := time.Now()
	if err := netUp(e.Dir, e.id, logf); err != nil {
		return nil, err
	}
	for n := 1; n <= Nodes; n++ {
		if err := e.startMember(n, "new"); err != nil {
			return nil, err
		}
	}
	for n := 1; n <= Nodes; n++ {
		if err := e.WaitReady(ctx, n, time.Minute); err != nil {
			return nil, err
		}
	}
	logf("etcd cluster %s: 3 members ready after %v", e.Dir, time.Since(began).Round(time.Millisecond))
	return e, nil
}

// Endpoint is member n's client address, "host:port".
func (e *Etcd) Endpoint(n int) string { return Addr(n) + ":" + strconv.Itoa(EtcdClientPort) }

// Endpoints are every member's client address.
func (e *Etcd) Endpoints() []string {
	eps := make([]string, Nodes)
	for n := 1; n <= Nodes; n++ {
		eps[n-1] = e.Endpoint(n)
	}
	return eps
}

// StoreURL is the store setting of the three members under prefix (no leading slash).
func (e *Etcd) StoreURL(prefix string) string {
	return "etcd://" + strings.Join(e.Endpoints(), ",") + "/" + prefix
}

// NetNS is the namespace file of node n: a process started in it (nsenter --net=…) is on
// member n's host.
func (e *Etcd) NetNS(n int) string { return netns.Path(nodeNS(e.id, n)) }

// Dial dials from node n's namespace, for an etcd client of the test process on that host.
func (e *Etcd) Dial(n int) func(ctx context.Context, addr string) (net.Conn, error) {
	return netns.GRPCDialer(e.NetNS(n))
}

func (e *Etcd) memberDir(n int) string { return filepath.Join(e.Dir, "etcd"+strconv.Itoa(n)) }

// startMember starts member n's etcd in its namespace; state is "new" for the first start,
// "existing" for a restart on its data. It does not wait.
func (e *Etcd) startMember(n int, state string) error {
	e.mu.Lock()
	if e.members[n] != nil {
		e.mu.Unlock()
		return nil
	}
	e.mu.Unlock()
	var initial []string
	for m := 1; m <= Nodes; m++ {
		initial = append(initial, fmt.Sprintf("m%d=http://%s:%d", m, Addr(m), EtcdPeerPort))
	}
	dir := e.memberDir(n)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	client := fmt.Sprintf("http://%s:%d", Addr(n), EtcdClientPort)
	peer := fmt.Sprintf("http://%s:%d", Addr(n), EtcdPeerPort)
	logFile, err := os.OpenFile(filepath.Join(dir, "etcd.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	defer logFile.Close()
	// nsenter execs etcd: the process started here is etcd itself, whose command line names the
	// run directory (which Sweep looks for).
	cmd := exec.Command("nsenter", "--net="+e.NetNS(n), "--", e.bin,
		"--name", "m"+strconv.Itoa(n), "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", state,
		"--initial-cluster-token", e.token,
		"--heartbeat-interval", strconv.Itoa(int(etcdHeartbeat.Milliseconds())),
		"--election-timeout", strconv.Itoa(int(etcdElection.Milliseconds())),
		"--logger", "zap", "--log-level", "info", "--log-outputs", "stderr")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A session of its own (no terminal signal reaches it), and it dies with the process that
	// started it; the next run's sweep removes what that leaves.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cluster: start etcd m%d: %w", n, err)
	}
	nd := &node{pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(nd.done) }()
	e.mu.Lock()
	e.members[n] = nd
	e.mu.Unlock()
	e.log("m%d: etcd pid %d started (%s)", n, nd.pid, state)
	return nil
}

// client is a client of member n alone, from n's namespace.
func (e *Etcd) client(n int) (*etcdstore.Store, error) {
	return etcdstore.New(etcdstore.Options{Endpoints: []string{e.Endpoint(n)}, Dial: e.Dial(n),
		DialTimeout: 2 * time.Second, RequestTimeout: 2 * time.Second, Prefix: "/lfp-faults-harness"})
}

// WaitReady waits until member n answers a linearizable read (it has a leader and has caught
// up), records its member ID, or fails after timeout, when ctx ends or when it exits.
func (e *Etcd) WaitReady(ctx context.Context, n int, timeout time.Duration) error {
	s, err := e.client(n)
	if err != nil {
		return err
	}
	defer s.Close()
	deadline := time.Now().Add(timeout)
	for {
		err := s.Ping(ctx)
		if err == nil {
			sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			st, serr := s.Client().Status(sctx, e.Endpoint(n))
			cancel()
			if err = serr; err == nil {
				e.mu.Lock()
				e.ids[n] = st.Header.MemberId
				e.mu.Unlock()
				return nil
			}
		}
		e.mu.Lock()
		nd := e.members[n]
		e.mu.Unlock()
		if nd == nil {
			return fmt.Errorf("cluster: etcd m%d is not running", n)
		}
		select {
		case <-nd.done:
			return fmt.Errorf("cluster: etcd m%d exited; its log ends:\n%s", n, e.logTail(n))
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster: etcd m%d not ready within %v: %v; its log ends:\n%s", n, timeout, err, e.logTail(n))
		}
		if err := timing.Sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

func (e *Etcd) logTail(n int) string {
	b, _ := os.ReadFile(filepath.Join(e.memberDir(n), "etcd.log"))
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// Start starts the given stopped or killed members again on their data, then waits until each
// answers (which needs a quorum among the running members).
func (e *Etcd) Start(ctx context.Context, ns ...int) error {
	for _, n := range ns {
		if err := e.startMember(n, "existing"); err != nil {
			return err
		}
	}
	for _, n := range ns {
		if err := e.WaitReady(ctx, n, 2*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// Kill crashes member n (SIGKILL) and waits for it to exit; Start restarts it.
func (e *Etcd) Kill(n int) error {
	e.stopMember(n, syscall.SIGKILL, 10*time.Second)
	e.log("m%d: etcd killed", n)
	return nil
}

// Stop shuts member n down cleanly (SIGTERM), SIGKILLing it after 20 s.
func (e *Etcd) Stop(n int) error {
	e.stopMember(n, syscall.SIGTERM, 20*time.Second)
	e.log("m%d: etcd stopped", n)
	return nil
}

func (e *Etcd) stopMember(n int, sig syscall.Signal, grace time.Duration) {
	e.mu.Lock()
	nd := e.members[n]
	e.members[n] = nil
	e.mu.Unlock()
	if nd != nil {
		nd.end(sig, grace)
	}
}

// Running reports whether member n's process runs (a paused one counts as running).
func (e *Etcd) Running(n int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.members[n] != nil
}

// Pause freezes member n (SIGSTOP): it keeps its connections open but answers nothing and
// takes no part in Raft, as a frozen VM. Resume thaws it.
func (e *Etcd) Pause(n int) error {
	e.log("m%d: frozen", n)
	return e.signal(n, syscall.SIGSTOP)
}

// Resume thaws a member that Pause froze.
func (e *Etcd) Resume(n int) error {
	e.log("m%d: thawed", n)
	return e.signal(n, syscall.SIGCONT)
}

func (e *Etcd) signal(n int, sig syscall.Signal) error {
	e.mu.Lock()
	nd := e.members[n]
	e.mu.Unlock()
	if nd == nil {
		return fmt.Errorf("cluster: etcd m%d is not running", n)
	}
	return syscall.Kill(nd.pid, sig)
}

// Partition cuts node n — its member and every process in its namespace — off the others.
func (e *Etcd) Partition(n int) error {
	e.log("node%d: partitioned", n)
	return partition(e.id, n)
}

// Heal undoes Partition.
func (e *Etcd) Heal(n int) error {
	e.log("node%d: healed", n)
	return heal(e.id, n)
}

// Leader returns the member that a running member, asked from its own namespace, names as the
// Raft leader (0 and an error when none does). Members that do not answer within two seconds
// (frozen, cut off and leaderless) are skipped.
func (e *Etcd) Leader(ctx context.Context) (int, error) {
	for n := 1; n <= Nodes; n++ {
		if !e.Running(n) {
			continue
		}
		leader, err := e.leaderSeenBy(ctx, n)
		if err == nil && leader != 0 {
			return leader, nil
		}
	}
	return 0, errors.New("cluster: no etcd member names a leader")
}

// leaderSeenBy returns the member that member n names as its leader (0: none).
func (e *Etcd) leaderSeenBy(ctx context.Context, n int) (int, error) {
	s, err := e.client(n)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := s.Client().Status(sctx, e.Endpoint(n))
	if err != nil {
		return 0, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for m := 1; m <= Nodes; m++ {
		if e.ids[m] != 0 && e.ids[m] == st.Leader {
			return m, nil
		}
	}
	return 0, nil
}

// WaitHealthy waits until every member runs, answers a linearizable read and names the same
// leader, or timeout passes.
func (e *Etcd) WaitHealthy(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for n := 1; n <= Nodes; n++ {
		if err := e.WaitReady(ctx, n, time.Until(deadline)); err != nil {
			return err
		}
	}
	for {
		seen := map[int]bool{}
		var errs []error
		for n := 1; n <= Nodes; n++ {
			l, err := e.leaderSeenBy(ctx, n)
			if err != nil {
				errs = append(errs, err)
			}
			seen[l] = true
		}
		if len(errs) == 0 && len(seen) == 1 && !seen[0] {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("cluster: the etcd members do not agree on a leader after %v: %v %v", timeout, seen, errors.Join(errs...))
		}
		if err := timing.Sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// Close stops every member, deletes the namespaces and removes the run directory. It is safe
// to call more than once.
func (e *Etcd) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	for n := 1; n <= Nodes; n++ {
		e.stopMember(n, syscall.SIGKILL, 10*time.Second)
	}
	return removeRun(e.Dir, e.log)
}

// DumpLogs hands every member's leadership lines to logf: what a failed test needs to tell which
// member led when.
func (e *Etcd) DumpLogs(logf func(format string, args ...any)) {
	dumpLogs(logf, "m", func(n int) string { return filepath.Join(e.memberDir(n), "etcd.log") },
		"became leader", "elected leader", "lost leader", "became follower", `"level":"fatal"`, `"level":"panic"`)
}
