package cluster

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// live holds the clusters of this process, for the signal handler.
var live struct {
	sync.Mutex
	clusters map[closer]bool
	handler  sync.Once
}

// ForTest starts a cluster for t and closes it when t ends. Without the prerequisites the
// test is skipped — except under CI=true, where it fails, so that CI never passes without the
// fault tests. An interrupt (SIGINT, SIGTERM) closes the clusters before the process exits.
func ForTest(t testing.TB) *Cluster {
	t.Helper()
	return forTest(t, "a three-manager Swarm of its own Docker engines", Prerequisites, 3*time.Minute, Start)
}

// EtcdForTest starts an etcd cluster for t as ForTest starts a Swarm.
func EtcdForTest(t testing.TB) *Etcd {
	t.Helper()
	return forTest(t, "a three-member etcd cluster in network namespaces", EtcdPrerequisites, 2*time.Minute, StartEtcd)
}

// forTest is ForTest for a cluster of either kind, what, which start starts within timeout.
func forTest[C interface {
	closer
	DumpLogs(logf func(format string, args ...any))
}](t testing.TB, what string, prerequisites func() error, timeout time.Duration, start func(context.Context, Options) (C, error)) C {
	t.Helper()
	leasetest.Long(t, "starts "+what)
	if err := prerequisites(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v, and CI=true: the fault tests must run in CI", err)
		}
		t.Skipf("%v: skipping a fault test", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := start(ctx, Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	register(c)
	t.Cleanup(func() {
		unregister(c)
		if t.Failed() {
			c.DumpLogs(t.Logf)
		}
		if err := c.Close(); err != nil {
			t.Errorf("closing %s: %v", what, err)
		}
	})
	return c
}

// closer is a cluster of either kind.
type closer interface{ Close() error }

func register(c closer) {
	live.Lock()
	defer live.Unlock()
	if live.clusters == nil {
		live.clusters = map[closer]bool{}
	}
	live.clusters[c] = true
	live.handler.Do(func() {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
		go func() {
			<-sigs
			live.Lock()
			for c := range live.clusters {
				_ = c.Close()
			}
			live.Unlock()
			os.Exit(130)
		}()
	})
}

func unregister(c closer) {
	live.Lock()
	defer live.Unlock()
	delete(live.clusters, c)
}
