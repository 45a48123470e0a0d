package main

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
)

// etcdTarget is an etcd on loopback (one member, or -etcd-members) with its defaults (fsync
// on), used the standard way: a session (a lease kept alive) per client and concurrency.Election. campaign is
// Election.Campaign, renew a KeepAliveOnce of the session's lease, resign Election.Resign.
var etcdTarget = target{name: "etcd", start: startEtcd}

// etcdClientsPerConn is how many benchmark clients share one etcd client (one gRPC connection),
// as an application's goroutines share theirs.
const etcdClientsPerConn = 8

func startEtcd(ctx context.Context, c config, dir string, counting bool) (*running, error) {
	members, endpoints, err := startEtcdCluster(ctx, c, dir, counting)
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
		conns[i], err = newEtcdConn(endpoints...)
		if err != nil {
			closeAll()
			stopAll(members)
			return nil, err
		}
	}
	return &running{proc: members[0], others: members[1:], load: func(ctx context.Context, clients, ops int) (measurement, error) {
		defer closeAll()
		return drive(ctx, members, clients, ops, func(i int) (client, error) {
			return newEtcdClient(ctx, conns[i/etcdClientsPerConn], i)
		})
	}}, nil
}

// stopAll stops the processes, ignoring their errors (a start that failed half way).
func stopAll(ps []*proc) {
	for _, p := range ps {
		_ = p.stop()
	}
}

// startEtcdCluster starts a cluster of c.etcdMembers members (etcd's defaults: fsync on,
// heartbeat 100 ms, election timeout 1 s) on free loopback ports, each with its data below dir,
// and returns them with their client URLs once every member answers a linearizable read. Only a
// single member can be counted (strace follows one process).
func startEtcdCluster(ctx context.Context, c config, dir string, counting bool) ([]*proc, []string, error) {
	n := max(c.etcdMembers, 1)
	if counting && n > 1 {
		return nil, nil, fmt.Errorf("flushes are counted on a single etcd member only (-etcd-members %d)", n)
	}
	var clientURLs, peerURLs, initial []string
	for i := range n {
		clientPort, err := freePort()
		if err != nil {
			return nil, nil, err
		}
		peerPort, err := freePort()
		if err != nil {
			return nil, nil, err
		}
		clientURLs = append(clientURLs, "http://127.0.0.1:"+strconv.Itoa(clientPort))
		peerURLs = append(peerURLs, "http://127.0.0.1:"+strconv.Itoa(peerPort))
		initial = append(initial, fmt.Sprintf("bench%d=%s", i, peerURLs[i]))
	}
	var ps []*proc
	for i := range n {
		p, err := startProc(c, dir, counting, c.etcd, append([]string{
			"--name", fmt.Sprintf("bench%d", i), "--data-dir", fmt.Sprintf("%s/etcd%d", dir, i),
			"--listen-client-urls", clientURLs[i], "--advertise-client-urls", clientURLs[i],
			"--listen-peer-urls", peerURLs[i], "--initial-advertise-peer-urls", peerURLs[i],
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-token", filepath.Base(dir),
			"--logger", "zap", "--log-level", "warn",
		}, c.etcdArgs...), nil)
		if err != nil {
			stopAll(ps)
			return nil, nil, err
		}
		ps = append(ps, p)
	}
	for i, p := range ps {
		cl, err := newEtcdConn(clientURLs[i])
		if err == nil {
			err = waitEtcd(ctx, cl, p)
			_ = cl.Close()
		}
		if err != nil {
			stopAll(ps)
			return nil, nil, err
		}
	}
	return ps, clientURLs, nil
}

// newEtcdConn is one etcd client (one gRPC connection, balanced over the endpoints).
func newEtcdConn(clientURLs ...string) (*clientv3.Client, error) {
	cl, err := clientv3.New(clientv3.Config{Endpoints: clientURLs, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
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
