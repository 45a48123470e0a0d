// Package etcdtest starts real etcd servers for tests, on loopback only: one in-process member
// (Embedded, package embed) for the fast suites — with TLS and client certificates, EmbeddedTLS — and clusters of separate etcd processes
// (StartCluster) whose members can be killed, stopped and restarted, for fault and performance
// tests. Everything it starts is stopped by the test's cleanup.
package etcdtest

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Embedded starts a single-member etcd inside the test process, with its data in a temporary
// directory, and returns its client endpoint ("127.0.0.1:PORT"). It is stopped when t ends.
func Embedded(t testing.TB) string {
	t.Helper()
	var lastErr error
	for range 5 { // a free port can be taken between choosing it and listening on it
		ep, err := startEmbedded(t, nil)
		if err == nil {
			return ep
		}
		lastErr = err
	}
	t.Fatalf("start an embedded etcd: %v", lastErr)
	return ""
}

// startEmbedded starts a single member; with tlsInfo set, its clients speak TLS.
func startEmbedded(t testing.TB, tlsInfo *transport.TLSInfo) (string, error) {
	ports, err := FreePorts(2)
	if err != nil {
		return "", err
	}
	client := url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(ports[0])}
	if tlsInfo != nil {
		client.Scheme = "https"
	}
	peer := url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(ports[1])}
	cfg := embed.NewConfig()
	cfg.Name = "embedded"
	cfg.Dir = t.TempDir()
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	if tlsInfo != nil {
		cfg.ClientTLSInfo = *tlsInfo
	}
	// Quiet: a test's output is its own, and etcd logs errors while it shuts down.
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	// Tests write small values at a high rate; the default 100 ms heartbeat is for networks.
	cfg.TickMs, cfg.ElectionMs = 10, 100
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return "", err
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return "", err
	case <-time.After(30 * time.Second):
		e.Close()
		return "", fmt.Errorf("not ready within 30 s")
	}
	t.Cleanup(e.Close)
	return client.Host, nil
}

// FreePorts returns n loopback TCP ports that were free a moment ago.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
