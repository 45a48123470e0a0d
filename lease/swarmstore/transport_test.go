package swarmstore_test

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
)

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip implements http.RoundTripper.
func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// newStoreWithTransport connects to the test Swarm like newStore, through a Docker client whose
// HTTP transport is wrap(base): for counting requests or acting between them. Only unix and tcp
// (plain HTTP) hosts are supported.
func newStoreWithTransport(t testing.TB, wrap func(base http.RoundTripper) http.RoundTripper) *swarmstore.Store {
	t.Helper()
	host := leasetest.SwarmHost(t)
	u, err := client.ParseHostURL(host)
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "unix" && u.Scheme != "tcp" {
		t.Fatalf("%s: these tests dial unix and tcp hosts only", host)
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	base := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, u.Scheme, u.Host)
		},
		MaxIdleConns:       6,
		IdleConnTimeout:    30 * time.Second,
		DisableCompression: u.Scheme == "unix",
	}
	// WithHost must come first: it also configures the default client's *http.Transport and
	// fails on any other transport. WithHTTPClient then replaces that default client; the host
	// WithHost recorded remains.
	docker, err := client.New(
		client.WithHost(host),
		client.WithHTTPClient(&http.Client{Transport: wrap(base), CheckRedirect: client.CheckRedirect}),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		docker.Close()
		base.CloseIdleConnections() // Close does not reach a transport it did not build
	})
	return swarmstore.New(docker)
}

// requestCounts counts a store's Docker API requests at the HTTP transport: reads (GET, HEAD)
// and writes (every other method).
type requestCounts struct{ reads, writes atomic.Int64 }

// newCountingStore connects to the test Swarm like newStore, counting its requests in c.
func newCountingStore(t testing.TB, c *requestCounts) *swarmstore.Store {
	t.Helper()
	return newStoreWithTransport(t, func(base http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				c.reads.Add(1)
			} else {
				c.writes.Add(1)
			}
			return base.RoundTrip(r)
		})
	})
}
