//go:build linux

package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/etcdstore/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// childScript logs "start FENCE" and, on SIGTERM, "stop" to $LOG: the supervised child.
const childScript = `echo "start $FENCE" >> "$LOG"; trap 'echo stop >> "$LOG"; exit 0' TERM; while :; do sleep 0.02; done`

// TestEtcdRunHandoverAndFailover runs etcd-run against a real single-node etcd: one leader's
// child at a time, with a growing fence; SIGTERM stops the child, resigns and exits 0, and the
// next contender starts at once; SIGKILL stops the child through the parent-death signal and the
// next contender starts once the lease has expired. It needs Debian's etcd-server (`etcd` on
// PATH) and skips without it, except in CI.
func TestEtcdRunHandoverAndFailover(t *testing.T) {
	etcdBin := etcdtest.Binary(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "etcd-run")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build etcd-run: %v\n%s", err, out)
	}
	endpoint := startEtcd(t, etcdBin, dir)
	const ttl = 2 * time.Second

	start := func(name string) (*exec.Cmd, string) {
		log := filepath.Join(dir, name+".log")
		cmd := exec.Command(bin, "-endpoints", endpoint, "-election", "/test/leader", "-value", name,
			"-ttl", "2", "-grace", "300ms", "-fence-env", "FENCE", "--", "sh", "-c", childScript)
		cmd.Env = append(os.Environ(), "LOG="+log)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a group with its child, for the cleanup
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
		return cmd, log
	}
	a, aLog := start("a")
	aFence := waitFence(t, aLog, 10*time.Second)
	b, bLog := start("b")

	sent := time.Now()
	if err := a.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	bFence := waitFence(t, bLog, 5*time.Second)
	handover := time.Since(sent)
	if err := a.Wait(); err != nil {
		t.Fatalf("etcd-run a after SIGTERM: %v, want exit 0", err)
	}
	if !strings.Contains(readFile(t, aLog), "stop") {
		t.Fatalf("a's child did not log its stop:\n%s", readFile(t, aLog))
	}
	if bFence <= aFence || handover >= ttl {
		t.Fatalf("handover: b's fence %d after a's %d, after %v; want a greater fence within the TTL %v (a resigned)", bFence, aFence, handover, ttl)
	}

	_, cLog := start("c")
	waitFor(t, 5*time.Second, "c campaigning (its session's lease granted)", func() bool { return leases(t, endpoint) >= 2 })
	killed := time.Now()
	if err := b.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "b's child stopped by the parent-death signal", func() bool { return strings.Contains(readFile(t, bLog), "stop") })
	cFence := waitFence(t, cLog, 4*ttl)
	failover := time.Since(killed)
	// b's lease was last kept alive at most TTL/3 before the kill, so it expires ⅔ TTL later at
	// the earliest.
	if cFence <= bFence || failover < 2*ttl/3 {
		t.Fatalf("failover: c's fence %d after b's %d, after %v; want a greater fence, no sooner than ⅔ TTL", cFence, bFence, failover)
	}
}

// startEtcd starts a single-member etcd with its data in dir on free loopback ports and returns
// its client URL once it serves; it is stopped when the test ends.
func startEtcd(t *testing.T, etcdBin, dir string) string {
	client, peer := "http://"+freeAddr(t), "http://"+freeAddr(t)
	cmd := exec.Command(etcdBin, "--name", "test", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "test="+peer,
		"--log-level", "warn", "--logger", "zap")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitFor(t, 30*time.Second, "etcd to serve", func() bool { return leases(t, client) >= 0 })
	return client
}

// leases returns how many leases etcd holds (one per etcd-run session), -1 while it does not
// answer.
func leases(t *testing.T, endpoint string) int {
	t.Helper()
	cl, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	resp, err := cl.Leases(ctx)
	if err != nil {
		return -1
	}
	return len(resp.Leases)
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitFence waits for the child's "start FENCE" line in log and returns the fence.
func waitFence(t *testing.T, log string, timeout time.Duration) int64 {
	t.Helper()
	var fence int64
	waitFor(t, timeout, "a child's start in "+log, func() bool {
		for line := range strings.Lines(readFile(t, log)) {
			if f, ok := strings.CutPrefix(strings.TrimSpace(line), "start "); ok {
				var err error
				if fence, err = strconv.ParseInt(f, 10, 64); err != nil {
					t.Fatalf("child started with fence %q", f)
				}
				return true
			}
		}
		return false
	})
	return fence
}

func readFile(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

// waitFor polls cond every 10 ms until it holds, or fails the test after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
