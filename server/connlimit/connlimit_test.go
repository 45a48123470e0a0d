package connlimit

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"
)

// fakeConn is a connection from addr that only records its closing.
type fakeConn struct {
	net.Conn // nil: the limiter calls only RemoteAddr and Close
	addr     net.Addr
	closed   bool
}

func (c *fakeConn) RemoteAddr() net.Addr { return c.addr }
func (c *fakeConn) Close() error         { c.closed = true; return nil }

// limiterClock drives a Limiter by hand.
type limiterClock struct {
	l   *Limiter
	now time.Time
}

func newTestLimiter(maxConns, perClient int, proxies ...netip.Prefix) *limiterClock {
	c := &limiterClock{l: newConnLimiter(maxConns, perClient, proxies, nil), now: time.Unix(1_000_000, 0)}
	c.l.now = func() time.Time { return c.now }
	return c
}

// admit accepts a connection from addr after d; nil when refused.
func (c *limiterClock) admit(t *testing.T, d time.Duration, addr string) (*trackedConn, *fakeConn) {
	t.Helper()
	c.now = c.now.Add(d)
	fc := &fakeConn{addr: net.TCPAddrFromAddrPort(netip.MustParseAddrPort(addr))}
	return c.l.admit(fc), fc
}

// serveRequests moves tc through n requests, ending idle.
func (c *limiterClock) serveRequests(tc *trackedConn, n int) {
	for range n {
		c.l.ConnState(tc, http.StateActive)
		c.l.ConnState(tc, http.StateIdle)
	}
}

// TestConnLimiterShedsWaitingConnectionsInOrder: at the bound a stalled fresh connection goes
// first, then an idle one that served one request, then one that just connected, then a
// reused one; busy connections never, so a new one is refused when all are busy; under
// pressure connections waiting over pressureIdleTimeout are closed.
func TestConnLimiterShedsWaitingConnectionsInOrder(t *testing.T) {
	c := newTestLimiter(4, 4)
	const peer = "192.0.2.1:1000"
	_, freshConn := c.admit(t, 0, peer)
	once, onceConn := c.admit(t, 0, peer)
	reused, reusedConn := c.admit(t, 0, peer)
	busy, busyConn := c.admit(t, 0, peer)
	c.serveRequests(once, 1)
	c.serveRequests(reused, 3)
	c.l.ConnState(busy, http.StateActive)

	// fresh is under a second old: the once-served idle one goes.
	arriving, arrivingConn := c.admit(t, 500*time.Millisecond, peer)
	if arriving == nil || !onceConn.closed || freshConn.closed || reusedConn.closed {
		t.Fatalf("first shed: once %v, fresh %v, reused %v", onceConn.closed, freshConn.closed, reusedConn.closed)
	}
	// No once-served one left and no stalled one: the oldest arriving one (fresh) goes.
	if tc, _ := c.admit(t, 100*time.Millisecond, peer); tc == nil || !freshConn.closed || reusedConn.closed {
		t.Fatalf("second shed: fresh %v, reused %v", freshConn.closed, reusedConn.closed)
	}
	// arriving is now stalled (1.1 s without a request): it goes before the reused one.
	if tc, _ := c.admit(t, time.Second, peer); tc == nil || !arrivingConn.closed || reusedConn.closed {
		t.Fatalf("third shed: arriving %v, reused %v", arrivingConn.closed, reusedConn.closed)
	}
	if busyConn.closed {
		t.Fatal("a busy connection was shed")
	}
	// Under pressure, everything that waited over pressureIdleTimeout is closed first.
	if tc, _ := c.admit(t, pressureIdleTimeout, peer); tc == nil || !reusedConn.closed {
		t.Fatalf("pressure: reused %v", reusedConn.closed)
	}
	if c.l.open > 4 {
		t.Fatalf("%d open, bound 4", c.l.open)
	}

	// All busy: the newcomer is refused and closed.
	all := newTestLimiter(2, 2)
	for range 2 {
		tc, _ := all.admit(t, 0, peer)
		all.l.ConnState(tc, http.StateActive)
	}
	if tc, fc := all.admit(t, 0, peer); tc != nil || !fc.closed {
		t.Fatalf("admitted %v, closed %v: want refused", tc != nil, fc.closed)
	}
}

// TestConnLimiterPerClient: a client at its bound sheds its own waiting connection, not
// another client's; a trusted proxy is bounded only globally; closing frees the slot.
func TestConnLimiterPerClient(t *testing.T) {
	c := newTestLimiter(10, 1, netip.MustParsePrefix("10.0.0.0/8"))
	_, a1 := c.admit(t, 0, "192.0.2.1:1")
	_, b1 := c.admit(t, 0, "192.0.2.2:1")
	if tc, _ := c.admit(t, 0, "192.0.2.1:2"); tc == nil || !a1.closed || b1.closed {
		t.Fatalf("client a at its bound: a1 closed %v, b1 closed %v", a1.closed, b1.closed)
	}
	_, v6a := c.admit(t, 0, "[2001:db8::1]:1")
	if _, _ = c.admit(t, 0, "[2001:db8::2]:1"); !v6a.closed {
		t.Fatal("two addresses of one IPv6 /64 are one client")
	}
	var proxied []*fakeConn
	for range 3 {
		_, fc := c.admit(t, 0, "10.1.2.3:1")
		proxied = append(proxied, fc)
	}
	for _, fc := range proxied {
		if fc.closed {
			t.Fatal("a trusted proxy's connections were bounded per client")
		}
	}
	tc, _ := c.admit(t, 0, "192.0.2.9:1")
	open := c.l.open
	if err := tc.Close(); err != nil || c.l.open != open-1 {
		t.Fatalf("close: %v, open %d → %d", err, open, c.l.open)
	}
	_ = tc.Close() // closing twice frees once
	if c.l.open != open-1 {
		t.Fatalf("second close: open %d", c.l.open)
	}
}

// TestConnectionDefaults: the bounds derive from the descriptor limit and are checked.
func TestConnectionDefaults(t *testing.T) {
	var o Options
	if err := connectionDefaults(&o); err != nil || o.MaxConnections < 1 || o.MaxConnectionsPerClient != max(o.MaxConnections/4, 1) {
		t.Fatalf("defaults: %+v %v", o, err)
	}
	if limit, ok := descriptorLimit(); ok && o.MaxConnections != limit-descriptorReserve(limit) {
		t.Fatalf("MaxConnections %d, want %d less the reserve %d", o.MaxConnections, limit, descriptorReserve(limit))
	}
	for _, bad := range []Options{{MaxConnections: -1}, {MaxConnectionsPerClient: -1}, {MaxConnections: 10, MaxConnectionsPerClient: 11}} {
		if err := connectionDefaults(&bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestConnLimiterShedsStreamsLast: at the global bound with nothing waiting, the oldest
// stream (hijacked SSE, or a watch its handler serves) is closed for the new connection; a
// request in progress never is.
func TestConnLimiterShedsStreamsLast(t *testing.T) {
	c := newTestLimiter(3, 3) // every connection from another client: only the global bound applies
	sse, sseConn := c.admit(t, 0, "192.0.2.1:1000")
	watch, watchConn := c.admit(t, 0, "192.0.2.2:1000")
	busy, busyConn := c.admit(t, 0, "192.0.2.3:1000")
	c.l.ConnState(sse, http.StateActive)
	c.l.ConnState(sse, http.StateHijacked)
	c.l.ConnState(watch, http.StateActive)
	MarkStream(ConnContext(context.Background(), watch))
	c.l.ConnState(busy, http.StateActive)

	first, _ := c.admit(t, 0, "192.0.2.4:1000")
	if first == nil || !sseConn.closed || watchConn.closed || busyConn.closed {
		t.Fatalf("first: sse %v, watch %v, busy %v", sseConn.closed, watchConn.closed, busyConn.closed)
	}
	c.l.ConnState(first, http.StateActive)
	second, _ := c.admit(t, 0, "192.0.2.5:1000")
	if second == nil || !watchConn.closed || busyConn.closed {
		t.Fatalf("second: watch %v, busy %v", watchConn.closed, busyConn.closed)
	}
	c.l.ConnState(second, http.StateActive)
	if tc, fc := c.admit(t, 0, "192.0.2.6:1000"); tc != nil || !fc.closed || busyConn.closed || c.l.streams.Len() != 0 {
		t.Fatalf("only busy connections left: admitted %v, busy closed %v, %d streams", tc != nil, busyConn.closed, c.l.streams.Len())
	}
}

// TestConnLimiterRequestsAllocateNothing: a connection that serves a request and waits again
// costs the limiter no allocation (it waits in two queues after every request), and a client's
// queue goes when its last connection closes.
func TestConnLimiterRequestsAllocateNothing(t *testing.T) {
	c := newTestLimiter(8, 8)
	tc, _ := c.admit(t, 0, "192.0.2.1:1000")
	other, _ := c.admit(t, 0, "192.0.2.1:1001")
	c.serveRequests(tc, 3)
	if allocs := testing.AllocsPerRun(100, func() { c.serveRequests(tc, 1) }); allocs != 0 {
		t.Errorf("a request: %v allocations, want 0", allocs)
	}
	if v := c.l.byAddr[tc.client].victim(c.now); v != other {
		t.Errorf("the client's victim: %v, want the fresh connection", v)
	}
	_ = tc.Close()
	_ = other.Close()
	if len(c.l.byAddr) != 0 || len(c.l.perAddr) != 0 || c.l.waiting.victim(c.now) != nil {
		t.Errorf("after the client's connections closed: %d client queues, %d client counts", len(c.l.byAddr), len(c.l.perAddr))
	}
}
