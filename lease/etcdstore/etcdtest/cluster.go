package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// BinaryEnv names the etcd server binary when it is not `etcd` on PATH.
const BinaryEnv = "LFP_ETCD_BIN"

// LookBinary returns the etcd server binary: $LFP_ETCD_BIN, else `etcd` on PATH (Debian's
// etcd-server).
func LookBinary() (string, error) {
	if bin := os.Getenv(BinaryEnv); bin != "" {
		return bin, nil
	}
	return exec.LookPath("etcd")
}

// Binary returns LookBinary's binary. Without one the test is skipped — or failed when CI=true,
// where .ci/run installs it: a test that CI never runs would go unnoticed when it breaks. Under
// -short (the fast lane) it is skipped too, as a Long test.
func Binary(t testing.TB) string {
	t.Helper()
	leasetest.Long(t, "runs etcd server processes")
	if bin, err := LookBinary(); err == nil {
		return bin
	}
	const msg = "no etcd server binary (apt-get install etcd-server, or set " + BinaryEnv + ")"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; CI installs it in .ci/run")
	}
	t.Skip(msg)
	return ""
}

// Cluster is a cluster of separate etcd processes on loopback ports, each with its data in a
// temporary directory. Its members can be killed, stopped and restarted; the test's cleanup
// kills every process it started, by PID.
type Cluster struct {
	t       testing.TB
	bin     string
	token   string
	members []*Member
}

// Member is one etcd process of a Cluster.
type Member struct {
	c *Cluster
	// Name is the member's name (m0, m1, …).
	Name string
	// Endpoint is its client address, "127.0.0.1:PORT".
	Endpoint string
	peerURL  string
	dir      string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	out  *leasetest.SyncBuffer
}

// StartCluster starts an n-member cluster and returns once every member answers a
// linearizable read (or fails t). Election timing is tightened for loopback (heartbeat 25 ms,
// election timeout 250 ms), so that a lost leader is replaced within a second.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	c := &Cluster{t: t, bin: Binary(t), token: fmt.Sprintf("lfp-test-%d", time.Now().UnixNano())}
	ports, err := FreePorts(2 * n)
	if err != nil {
		t.Fatal(err)
	}
	var initial []string
	for i := range n {
		m := &Member{c: c, Name: "m" + strconv.Itoa(i), Endpoint: "127.0.0.1:" + strconv.Itoa(ports[2*i]),
			peerURL: "http://127.0.0.1:" + strconv.Itoa(ports[2*i+1]), dir: filepath.Join(t.TempDir(), "m"+strconv.Itoa(i))}
		c.members = append(c.members, m)
		initial = append(initial, m.Name+"="+m.peerURL)
	}
	t.Cleanup(c.killAll)
	for _, m := range c.members {
		if err := m.start(strings.Join(initial, ","), "new"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, m := range c.members {
		if err := m.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// Members returns the members, in order.
func (c *Cluster) Members() []*Member { return c.members }

// Endpoints returns every member's client address.
func (c *Cluster) Endpoints() []string {
	eps := make([]string, len(c.members))
	for i, m := range c.members {
		eps[i] = m.Endpoint
	}
	return eps
}

// Leader returns the member that the running members name as their leader.
func (c *Cluster) Leader(ctx context.Context) (*Member, error) {
	cli, err := newClient(c.Endpoints())
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	for _, m := range c.members {
		if !m.Running() {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := cli.Status(sctx, m.Endpoint)
		cancel()
		if err != nil || st.Leader == 0 {
			continue
		}
		for _, l := range c.members {
			if lst, err := statusOf(ctx, cli, l); err == nil && lst.Header.MemberId == st.Leader {
				return l, nil
			}
		}
	}
	return nil, errors.New("etcdtest: no member names a leader")
}

func statusOf(ctx context.Context, cli *clientv3.Client, m *Member) (*clientv3.StatusResponse, error) {
	if !m.Running() {
		return nil, errors.New("not running")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return cli.Status(ctx, m.Endpoint)
}

func (c *Cluster) killAll() {
	for _, m := range c.members {
		_ = m.Kill()
	}
}

func (m *Member) start(initialCluster, state string) error {
	client := "http://" + m.Endpoint
	cmd := exec.Command(m.c.bin,
		"--name", m.Name, "--data-dir", m.dir,
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", m.peerURL, "--initial-advertise-peer-urls", m.peerURL,
		"--initial-cluster", initialCluster, "--initial-cluster-state", state,
		"--initial-cluster-token", m.c.token,
		"--heartbeat-interval", "25", "--election-timeout", "250",
		"--logger", "zap", "--log-level", "error")
	out := &leasetest.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so that a signal meant for it reaches nothing else.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("etcdtest: start %s: %w", m.Name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	m.mu.Lock()
	m.cmd, m.done, m.out = cmd, done, out
	m.mu.Unlock()
	return nil
}

// Running reports whether the member's process is alive (stopped counts as alive).
func (m *Member) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done == nil {
		return false
	}
	select {
	case <-m.done:
		return false
	default:
		return true
	}
}

// PID is the member's process id (0 when it is not running).
func (m *Member) PID() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil || m.cmd.Process == nil {
		return 0
	}
	return m.cmd.Process.Pid
}

// Kill sends SIGKILL to the member's process and waits for it to exit: a crash. Its data
// stays for Restart.
func (m *Member) Kill() error { return m.signalAndWait(syscall.SIGKILL) }

// Stop freezes the member (SIGSTOP): it keeps its connections but answers nothing, like a
// paused VM. Continue resumes it.
func (m *Member) Stop() error { return m.signal(syscall.SIGSTOP) }

// Continue resumes a member frozen by Stop.
func (m *Member) Continue() error { return m.signal(syscall.SIGCONT) }

func (m *Member) signal(sig syscall.Signal) error {
	pid := m.PID()
	if pid == 0 || !m.Running() {
		return fmt.Errorf("etcdtest: %s is not running", m.Name)
	}
	return syscall.Kill(pid, sig)
}

func (m *Member) signalAndWait(sig syscall.Signal) error {
	if !m.Running() {
		return nil
	}
	_ = syscall.Kill(m.PID(), syscall.SIGCONT) // a stopped process must run to die of most signals
	if err := syscall.Kill(m.PID(), sig); err != nil {
		return err
	}
	m.mu.Lock()
	done := m.done
	m.mu.Unlock()
	select {
	case <-done:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("etcdtest: %s did not exit within 30 s of %v", m.Name, sig)
	}
}

// Restart starts a killed member again on its data and ports, as a member of the existing
// cluster, and waits until it answers.
func (m *Member) Restart(ctx context.Context) error {
	if m.Running() {
		return fmt.Errorf("etcdtest: %s is running", m.Name)
	}
	var initial []string
	for _, o := range m.c.members {
		initial = append(initial, o.Name+"="+o.peerURL)
	}
	if err := m.start(strings.Join(initial, ","), "existing"); err != nil {
		return err
	}
	return m.WaitReady(ctx)
}

// WaitReady waits until the member answers a linearizable read, or ctx ends, or it exits.
func (m *Member) WaitReady(ctx context.Context) error {
	cli, err := newClient([]string{m.Endpoint})
	if err != nil {
		return err
	}
	defer cli.Close()
	for {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := cli.Get(rctx, "etcdtest-ready")
		cancel()
		if err == nil {
			return nil
		}
		m.mu.Lock()
		done, out := m.done, m.out.String()
		m.mu.Unlock()
		select {
		case <-done:
			return fmt.Errorf("etcdtest: %s exited:\n%s", m.Name, out)
		case <-ctx.Done():
			return fmt.Errorf("etcdtest: %s not ready: %v\n%s", m.Name, err, out)
		case <-time.After(20 * time.Millisecond): // poll interval while the member starts
		}
	}
}

func newClient(endpoints []string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
}
