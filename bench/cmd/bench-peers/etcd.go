package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
)

// etcdTarget is a single-node etcd on loopback with its defaults (fsync on), used the standard
// way: a session (a lease kept alive) per client and concurrency.Election. campaign is
// Election.Campaign, renew a KeepAliveOnce of the session's lease, resign Election.Resign.
var etcdTarget = target{name: "etcd", start: startEtcd}

// etcdClientsPerConn is how many benchmark clients share one etcd client (one gRPC connection),
// as an application's goroutines share theirs.
const etcdClientsPerConn = 8

func startEtcd(ctx context.Context, c config, dir string, counting bool) (*running, error) {
	p, clientURL, err := startEtcdServer(ctx, c, dir, counting)
	if err != nil {
		return nil, err
	}
	conns := make([]*clientv3.Client, (c.clients+etcdClientsPerConn-1)/etcdClientsPerConn)
	closeAll := func() {
		for _, cl := range conns {
			if cl != nil {
				_ = cl.Close()
			}
		}
	}
	for i := range conns {
		conns[i], err = newEtcdConn(clientURL)
		if err != nil {
			closeAll()
			_ = p.stop()
			return nil, err
		}
	}
	return &running{proc: p, load: func(ctx context.Context, clients, ops int) (measurement, error) {
		defer closeAll()
		return drive(ctx, p, clients, ops, func(i int) (client, error) {
			return newEtcdClient(ctx, conns[i/etcdClientsPerConn], i)
		})
	}}, nil
}

// startEtcdServer starts a single-member etcd on two free loopback ports with its data in dir
// and returns it, with its client URL, once it answers a linearizable read.
func startEtcdServer(ctx context.Context, c config, dir string, counting bool) (*proc, string, error) {
	clientPort, err := freePort()
	if err != nil {
		return nil, "", err
	}
	peerPort, err := freePort()
	if err != nil {
		return nil, "", err
	}
	clientURL := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	p, err := startProc(c, dir, counting, c.etcd, []string{
		"--name", "bench", "--data-dir", dir + "/etcd",
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "bench=" + peerURL, "--logger", "zap", "--log-level", "warn",
	}, nil)
	if err != nil {
		return nil, "", err
	}
	cl, err := newEtcdConn(clientURL)
	if err == nil {
		err = waitEtcd(ctx, cl, p)
		_ = cl.Close()
	}
	if err != nil {
		_ = p.stop()
		return nil, "", err
	}
	return p, clientURL, nil
}

// newEtcdConn is one etcd client (one gRPC connection) to clientURL.
func newEtcdConn(clientURL string) (*clientv3.Client, error) {
	cl, err := clientv3.New(clientv3.Config{Endpoints: []string{clientURL}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("etcd client: %w", err)
	}
	return cl, nil
}

// waitEtcd waits until etcd answers a linearizable read.
func waitEtcd(ctx context.Context, cl *clientv3.Client, p *proc) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := cl.Get(rctx, "bench-ready")
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("etcd not ready within 30 s: %v\n%s", err, p.out.String())
		}
		select {
		case <-p.done:
			return fmt.Errorf("etcd exited:\n%s", p.out.String())
		case <-time.After(20 * time.Millisecond): // poll interval while etcd starts
		}
	}
}

type etcdClient struct {
	session  *concurrency.Session
	election *concurrency.Election
	value    string
}

func newEtcdClient(ctx context.Context, cl *clientv3.Client, i int) (client, error) {
	s, err := concurrency.NewSession(cl, concurrency.WithTTL(30), concurrency.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	return &etcdClient{session: s, election: concurrency.NewElection(s, fmt.Sprintf("/bench/room-%03d", i)), value: "c" + strconv.Itoa(i)}, nil
}

func (c *etcdClient) do(ctx context.Context, k int) error {
	switch cycleOps[k] {
	case "campaign":
		return c.election.Campaign(ctx, c.value)
	case "renew":
		_, err := c.session.Client().KeepAliveOnce(ctx, c.session.Lease())
		return err
	default:
		return c.election.Resign(ctx)
	}
}

func (c *etcdClient) close() { _ = c.session.Close() }

// freePort returns a loopback TCP port free at the moment.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
