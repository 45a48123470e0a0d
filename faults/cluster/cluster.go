// Package cluster builds a real three-manager Docker Swarm on one Linux machine and injects
// faults into it: crash, stop and restart a manager, partition and heal it, freeze and thaw it.
//
// Each manager is its own dockerd in its own network namespace, wired by a veth pair to a bridge
// that sits in a fourth namespace, so that nothing is added to the host's network and nothing
// routes anywhere but the cluster's own subnet. Every piece of state lives under one directory
// (Root/run-<pid>); the namespaces carry the same run id in their names. A run that was killed
// before it could clean up is swept away by the next Start (Sweep).
//
// The dockerds listen on unix sockets under the run directory, which work from the host
// namespace: DOCKER_HOST=Host(n) attaches a process to manager n.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/regbo/lfp-swarm-lease/timing"
)

// Root is the directory that holds every run's state, one run-<pid> directory per run. It is
// distinct from the single-node test Swarm's /tmp/lfp-swarm-test and from ad-hoc clusters.
const Root = "/tmp/lfp-faults"

// Nodes is the number of managers.
const Nodes = 3

// Addresses: the managers are Subnet.1–3; the two pools keep Docker's own networks inside the
// cluster's range as well (docker_gwbridge, ingress).
const (
	Subnet    = "10.213.9"
	localPool = "10.213.160.0/19"
	swarmPool = "10.213.192.0/19"
)

// netnsPrefix starts the name of every network namespace a run creates: lfpf<pid>-hub and
// lfpf<pid>-n1…3.
const netnsPrefix = "lfpf"

// Cluster is one running three-manager Swarm.
type Cluster struct {
	// Dir is the run directory; everything of the run lives below it.
	Dir string
	id  string // the run id: the creating process's PID
	log func(format string, args ...any)

	mu      sync.Mutex
	nodes   [Nodes + 1]*node // 1-based
	nodeIDs [Nodes + 1]string
	closed  bool
}

// node is a cluster's process while it runs: a manager's dockerd, an etcd member.
type node struct {
	pid  int
	done chan struct{} // closed when the process has exited and was reaped
}

// end sends sig to the process — SIGCONT first: a frozen one would never act on it — and waits
// up to grace for it to exit, then SIGKILLs it.
func (nd *node) end(sig syscall.Signal, grace time.Duration) {
	_ = syscall.Kill(nd.pid, syscall.SIGCONT)
	_ = syscall.Kill(nd.pid, sig)
	select {
	case <-nd.done:
	case <-time.After(grace):
		_ = syscall.Kill(nd.pid, syscall.SIGKILL)
		<-nd.done
	}
}

// Options configures Start.
type Options struct {
	// Logf receives one line per harness action (nil: discard).
	Logf func(format string, args ...any)
}

// Prerequisites reports what this machine lacks to build a cluster: root, dockerd, docker, ip,
// nsenter, unshare. nil means a cluster can be started.
func Prerequisites() error {
	if missing := lacking("network namespaces and dockerd need it", "dockerd", "docker", "ip", "nsenter", "unshare", "mount", "umount"); len(missing) > 0 {
		return fmt.Errorf("a fault-test cluster needs %s", strings.Join(missing, ", "))
	}
	return nil
}

// lacking lists what this machine lacks of root (why: what needs it) and of the tools.
func lacking(why string, tools ...string) []string {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root ("+why+")")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	return missing
}

// startRun sweeps the leftovers of dead runs and makes this process's run directory: a process
// runs one cluster (of either kind) at a time. It returns the directory, the run id and
// opts.Logf (nil: discard).
func startRun(opts Options) (dir, id string, logf func(string, ...any), err error) {
	logf = opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if err := Sweep(logf); err != nil {
		return "", "", nil, err
	}
	id = strconv.Itoa(os.Getpid())
	dir = filepath.Join(Root, "run-"+id)
	if _, err := os.Stat(dir); err == nil {
		return "", "", nil, fmt.Errorf("cluster: %s already exists: this process runs a cluster already", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", nil, fmt.Errorf("cluster: %w", err)
	}
	return dir, id, logf, nil
}

// Start sweeps the leftovers of dead runs, then builds the namespaces, starts the three
// dockerds and joins them as managers of one Swarm. On error everything it created is removed.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if err := Prerequisites(); err != nil {
		return nil, err
	}
	dir, id, logf, err := startRun(opts)
	if err != nil {
		return nil, err
	}
	c = &Cluster{Dir: dir, id: id, log: logf}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Close())
			c = nil
		}
	}()
	began := time.Now()
	if err := c.netUp(); err != nil {
		return nil, err
	}
	for n := 1; n <= Nodes; n++ {
		if err := c.StartNode(ctx, n); err != nil {
			return nil, err
		}
	}
	if err := c.formSwarm(ctx); err != nil {
		return nil, err
	}
	logf("cluster %s: 3-manager swarm ready after %v", c.Dir, time.Since(began).Round(time.Millisecond))
	return c, nil
}

// Host is the DOCKER_HOST of manager n.
func (c *Cluster) Host(n int) string { return "unix://" + c.socket(n) }

// Addr is manager n's address on the cluster's subnet.
func Addr(n int) string { return fmt.Sprintf("%s.%d", Subnet, n) }

func (c *Cluster) nodeDir(n int) string { return filepath.Join(c.Dir, "node"+strconv.Itoa(n)) }
func (c *Cluster) socket(n int) string  { return filepath.Join(c.nodeDir(n), "docker.sock") }
func (c *Cluster) nodeNS(n int) string  { return nodeNS(c.id, n) }

// hubNS and nodeNS name the namespaces of run id: the bridge's, and node n's.
func hubNS(id string) string         { return netnsPrefix + id + "-hub" }
func nodeNS(id string, n int) string { return fmt.Sprintf("%s%s-n%d", netnsPrefix, id, n) }

// NodeID is the Swarm node ID of manager n.
func (c *Cluster) NodeID(n int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodeIDs[n]
}

// Docker runs the docker CLI against manager n and returns its trimmed output; a failure's
// error carries the output.
func (c *Cluster) Docker(ctx context.Context, n int, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "docker", append([]string{"-H", c.Host(n)}, args...)...)
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("docker -H node%d %s: %w: %s", n, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// run runs a host command (ip, sysctl through nsenter) and folds its output into the error.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// netUp creates the hub namespace with its bridge and one namespace per manager, each with a
// veth whose hub-side end (n1…n3) is what Partition takes down. IPv6 is off so that the
// managers cannot reach each other other than through the subnet.
func (c *Cluster) netUp() error { return netUp(c.Dir, c.id, c.log) }

// netUp builds run id's network (see Cluster.netUp) and records its namespaces in dir.
func netUp(dir, id string, log func(format string, args ...any)) error {
	if err := os.WriteFile(filepath.Join(dir, "netns"), []byte(hubNS(id)+"\n"+nodeNS(id, 1)+"\n"+nodeNS(id, 2)+"\n"+nodeNS(id, 3)+"\n"), 0o644); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	hub := hubNS(id)
	noV6 := func(ns string) error {
		return run("nsenter", "--net=/run/netns/"+ns, "sysctl", "-qw",
			"net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
	}
	steps := [][]string{{"netns", "add", hub}, {"-n", hub, "link", "set", "lo", "up"}}
	if err := runIP(steps); err != nil {
		return err
	}
	if err := noV6(hub); err != nil {
		return err
	}
	if err := runIP([][]string{{"-n", hub, "link", "add", "br0", "type", "bridge"}, {"-n", hub, "link", "set", "br0", "up"}}); err != nil {
		return err
	}
	for n := 1; n <= Nodes; n++ {
		ns, peer := nodeNS(id, n), "n"+strconv.Itoa(n)
		if err := runIP([][]string{{"netns", "add", ns}}); err != nil {
			return err
		}
		if err := noV6(ns); err != nil {
			return err
		}
		if err := runIP([][]string{
			{"-n", ns, "link", "set", "lo", "up"},
			{"-n", hub, "link", "add", peer, "type", "veth", "peer", "name", "eth0", "netns", ns},
			{"-n", hub, "link", "set", peer, "master", "br0", "up"},
			{"-n", ns, "addr", "add", Addr(n) + "/24", "dev", "eth0"},
			{"-n", ns, "link", "set", "eth0", "up"},
		}); err != nil {
			return err
		}
	}
	log("namespaces %s, %s…%s and bridge ready", hub, nodeNS(id, 1), nodeNS(id, Nodes))
	return nil
}

func runIP(steps [][]string) error {
	for _, s := range steps {
		if err := run("ip", s...); err != nil {
			return fmt.Errorf("cluster network: %w", err)
		}
	}
	return nil
}

// formSwarm initialises the Swarm on manager 1 and joins 2 and 3 as managers, then waits until
// all three are reachable managers.
func (c *Cluster) formSwarm(ctx context.Context) error {
	if _, err := c.Docker(ctx, 1, "swarm", "init", "--advertise-addr", Addr(1), "--listen-addr", Addr(1)+":2377",
		"--default-addr-pool", swarmPool, "--default-addr-pool-mask-length", "24"); err != nil {
		return err
	}
	token, err := c.Docker(ctx, 1, "swarm", "join-token", "-q", "manager")
	if err != nil {
		return err
	}
	for n := 2; n <= Nodes; n++ {
		if _, err := c.Docker(ctx, n, "swarm", "join", "--token", token, "--advertise-addr", Addr(n),
			"--listen-addr", Addr(n)+":2377", Addr(1)+":2377"); err != nil {
			return err
		}
	}
	for n := 1; n <= Nodes; n++ {
		id, err := c.Docker(ctx, n, "info", "--format", "{{.Swarm.NodeID}}")
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.nodeIDs[n] = id
		c.mu.Unlock()
	}
	return c.WaitManagers(ctx, 1, 60*time.Second)
}

// Managers returns, as seen through manager via, each manager's status: "Leader", "Reachable"
// or "Unreachable", by node number.
func (c *Cluster) Managers(ctx context.Context, via int) (map[int]string, error) {
	out, err := c.Docker(ctx, via, "node", "ls", "--format", "{{.ID}} {{.ManagerStatus}}")
	if err != nil {
		return nil, err
	}
	byID := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			byID[f[0]] = f[1]
		}
	}
	status := map[int]string{}
	for n := 1; n <= Nodes; n++ {
		status[n] = byID[c.NodeID(n)]
	}
	return status, nil
}

// Leader returns the number of the current Raft leader as seen through manager via.
func (c *Cluster) Leader(ctx context.Context, via int) (int, error) {
	status, err := c.Managers(ctx, via)
	if err != nil {
		return 0, err
	}
	for n, s := range status {
		if s == "Leader" {
			return n, nil
		}
	}
	return 0, fmt.Errorf("cluster: manager %d sees no leader: %v", via, status)
}

// WaitManagers polls through manager via until all three managers are Leader or Reachable, or
// timeout passes.
func (c *Cluster) WaitManagers(ctx context.Context, via int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		status, err := c.Managers(callCtx, via)
		cancel()
		ok := err == nil
		for _, s := range status {
			ok = ok && (s == "Leader" || s == "Reachable")
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("cluster: the managers are not all reachable via node%d after %v: %v (%v)", via, timeout, status, err)
		}
		if err := timing.Sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// Close stops every dockerd, deletes the namespaces (and with them the bridge and veths) and
// removes the run directory. It is safe to call more than once.
func (c *Cluster) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	for n := 1; n <= Nodes; n++ {
		c.stop(n, syscall.SIGTERM, 20*time.Second)
	}
	return removeRun(c.Dir, c.log)
}

// DumpLogs hands the Raft leadership lines of every manager's dockerd log to logf: what a
// failed test needs to tell which manager led when.
func (c *Cluster) DumpLogs(logf func(format string, args ...any)) {
	dumpLogs(logf, "node", func(n int) string { return filepath.Join(c.nodeDir(n), "dockerd.log") },
		"became leader", "stepped down", "higher term", "new election", "level=fatal")
}

// dumpLogs hands logf the lines of each node's log (at path(n)) that hold one of keys, after
// the node's name.
func dumpLogs(logf func(format string, args ...any), name string, path func(n int) string, keys ...string) {
	for n := 1; n <= Nodes; n++ {
		b, err := os.ReadFile(path(n))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if slices.ContainsFunc(keys, func(key string) bool { return strings.Contains(line, key) }) {
				logf("%s%d: %s", name, n, line)
			}
		}
	}
}
