package cluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/regbo/lfp-swarm-lease/timing"
)

// StartNode starts manager n's dockerd (again) and waits until its API answers. It is a no-op
// when that dockerd runs.
//
// The dockerd runs in manager n's network namespace and in a mount and UTS namespace of its own:
// a fresh sysfs shows that network namespace's devices, but hides the host's cgroup tree, which
// is moved aside and back (without it dockerd dies with "Devices cgroup isn't mounted"), and
// /etc/docker is overlaid so that the managers do not share the host's engine key. The exec
// chain keeps the PID, so the process started here is dockerd itself.
func (c *Cluster) StartNode(ctx context.Context, n int) error {
	c.mu.Lock()
	if c.nodes[n] != nil {
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	dir := c.nodeDir(n)
	for _, d := range []string{filepath.Join(dir, "etc-docker"), filepath.Join(dir, ".cgmove")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
	}
	config := filepath.Join(dir, "daemon.json")
	if err := os.WriteFile(config, []byte("{}\n"), 0o644); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	// A SIGKILLed dockerd leaves its pidfile, and dockerd refuses to start beside one whose PID
	// is alive (PIDs are reused); containerd's is checked the same way.
	_ = os.Remove(filepath.Join(dir, "docker.pid"))
	if pid, ok := readPID(filepath.Join(dir, "exec", "containerd", "containerd.pid")); !ok || !ownedBy(pid, dir) {
		_ = os.Remove(filepath.Join(dir, "exec", "containerd", "containerd.pid"))
	}
	script := strings.Join([]string{
		"set -e",
		"hostname lfpf-node" + strconv.Itoa(n),
		"mount --move /sys/fs/cgroup " + dir + "/.cgmove",
		"umount -l /sys",
		"mount -t sysfs sysfs /sys",
		"mount --move " + dir + "/.cgmove /sys/fs/cgroup",
		"mount --bind " + dir + "/etc-docker /etc/docker",
		"exec dockerd --config-file " + config + " --data-root " + dir + "/data --exec-root " + dir + "/exec" +
			" --pidfile " + dir + "/docker.pid -H unix://" + c.socket(n) + " --bridge=none --iptables=false" +
			" --ip-forward=false --ip-masq=false --storage-driver=vfs --default-address-pool base=" + localPool + ",size=24",
	}, "\n")
	logFile, err := os.OpenFile(filepath.Join(dir, "dockerd.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command("nsenter", "--net=/run/netns/"+c.nodeNS(n), "--",
		"unshare", "--mount", "--uts", "--propagation", "slave", "--", "sh", "-c", script)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A session of its own, so that no terminal signal reaches it; and it dies with the process
	// that started it (a test binary that times out), whose namespaces and directory the next
	// run's sweep then removes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cluster: start dockerd node%d: %w", n, err)
	}
	nd := &node{pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(nd.done) }()
	if err := os.WriteFile(filepath.Join(dir, "launch.pid"), []byte(strconv.Itoa(nd.pid)+"\n"), 0o644); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	c.mu.Lock()
	c.nodes[n] = nd
	c.mu.Unlock()
	if err := waitPing(ctx, c.socket(n), nd.done, 60*time.Second); err != nil {
		tail, _ := os.ReadFile(filepath.Join(dir, "dockerd.log"))
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return fmt.Errorf("cluster: dockerd node%d: %w; its log ends:\n%s", n, err, tail)
	}
	c.log("node%d: dockerd pid %d answers after %v", n, nd.pid, time.Since(began).Round(time.Millisecond))
	return nil
}

// waitPing polls the engine's /_ping on socket until it answers 200, the process ends (done)
// or timeout passes.
func waitPing(ctx context.Context, socket string, done <-chan struct{}, timeout time.Duration) error {
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socket)
		},
	}}
	defer hc.CloseIdleConnections()
	deadline := time.Now().Add(timeout)
	for {
		if resp, err := hc.Get("http://engine/_ping"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-done:
			return fmt.Errorf("dockerd exited before answering")
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer on %s within %v", socket, timeout)
		}
		if err := timing.Sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// Kill crashes manager n: SIGKILL to its dockerd (and its containerd), as a power loss of the
// engine. Restart it with StartNode.
func (c *Cluster) Kill(n int) error {
	c.stop(n, syscall.SIGKILL, 10*time.Second)
	c.log("node%d: dockerd killed", n)
	return nil
}

// Stop shuts manager n's dockerd down cleanly (SIGTERM), SIGKILLing it after 30 s.
func (c *Cluster) Stop(n int) error {
	c.stop(n, syscall.SIGTERM, 30*time.Second)
	c.log("node%d: dockerd stopped", n)
	return nil
}

// stop signals manager n's dockerd, waits up to grace for it to exit (then SIGKILLs it) and
// makes sure its containerd is gone too.
func (c *Cluster) stop(n int, sig syscall.Signal, grace time.Duration) {
	c.mu.Lock()
	nd := c.nodes[n]
	c.nodes[n] = nil
	c.mu.Unlock()
	if nd == nil {
		return
	}
	nd.end(sig, grace)
	// containerd is dockerd's child with a parent-death signal; make sure anyway.
	dir := c.nodeDir(n)
	if pid, ok := readPID(filepath.Join(dir, "exec", "containerd", "containerd.pid")); ok && ownedBy(pid, dir) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = os.Remove(filepath.Join(dir, "docker.pid"))
}

// Running reports whether manager n's dockerd runs (frozen counts as running).
func (c *Cluster) Running(n int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[n] != nil
}

// Partition cuts manager n off the others: the hub side of its veth goes down. Its API still
// answers on its unix socket, from its own (now isolated) view of the Swarm.
func (c *Cluster) Partition(n int) error {
	c.log("node%d: partitioned", n)
	return partition(c.id, n)
}

// partition takes the hub side of node n's veth down; heal brings it up.
func partition(id string, n int) error {
	return run("ip", "-n", hubNS(id), "link", "set", "n"+strconv.Itoa(n), "down")
}

func heal(id string, n int) error {
	return run("ip", "-n", hubNS(id), "link", "set", "n"+strconv.Itoa(n), "up")
}

// Heal undoes Partition.
func (c *Cluster) Heal(n int) error {
	c.log("node%d: healed", n)
	return heal(c.id, n)
}

// Pause freezes manager n's dockerd and containerd (SIGSTOP): the engine neither answers nor
// takes part in Raft, but keeps its connections open.
func (c *Cluster) Pause(n int) error {
	c.log("node%d: frozen", n)
	return c.signalEngine(n, syscall.SIGSTOP)
}

// Resume thaws a manager that Pause froze.
func (c *Cluster) Resume(n int) error {
	c.log("node%d: thawed", n)
	return c.signalEngine(n, syscall.SIGCONT)
}

func (c *Cluster) signalEngine(n int, sig syscall.Signal) error {
	c.mu.Lock()
	nd := c.nodes[n]
	c.mu.Unlock()
	if nd == nil {
		return nil
	}
	dir := c.nodeDir(n)
	if pid, ok := readPID(filepath.Join(dir, "exec", "containerd", "containerd.pid")); ok && ownedBy(pid, dir) {
		_ = syscall.Kill(pid, sig)
	}
	return syscall.Kill(nd.pid, sig)
}

// readPID reads a pidfile.
func readPID(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, err == nil && pid > 0
}

// ownedBy reports whether pid is a live (non-zombie) process whose command line names dir: a
// process of that run, not a stranger that reused the PID.
func ownedBy(pid int, dir string) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	if i := strings.LastIndexByte(string(stat), ')'); i < 0 || strings.HasPrefix(strings.TrimSpace(string(stat[i+1:])), "Z") {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && strings.Contains(string(cmdline), dir+"/")
}
