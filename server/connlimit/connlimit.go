package connlimit

import (
	"container/list"
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/regbo/lfp-swarm-lease/server/clientip"
)

// Defaults of the connection limits.
const (
	// DefaultMaxConnections is the bound where the descriptor limit cannot be read.
	DefaultMaxConnections = 4096
	// pressureIdleTimeout is the idle keep-alive timeout above the pressure mark.
	pressureIdleTimeout = 5 * time.Second
	// freshGrace: a client sends its request right after connecting, within milliseconds; a
	// connection without a complete request after this long is stalled, and shed first.
	freshGrace = time.Second
)

// descriptorReserve is how many descriptors of limit are kept for the store (its files, its
// Docker connections), the listener, the poller and the process itself: a fixed floor plus an
// eighth, since a larger store (more shards, more Docker connections) comes with larger limits.
func descriptorReserve(limit int) int { return 64 + limit/8 }

// Capacity is the largest MaxConnections the process's descriptor limit allows: the
// soft RLIMIT_NOFILE less the reserve for the store and the process. ok is false where the
// limit cannot be read (then DefaultMaxConnections is the default).
func Capacity() (capacity int, ok bool) {
	limit, ok := descriptorLimit()
	if !ok {
		return 0, false
	}
	return max(limit-descriptorReserve(limit), 1), true
}

// Options configure a Limiter. Zero limits take the defaults.
type Options struct {
	// MaxConnections bounds the open connections, hijacked streams included (default: Capacity,
	// else DefaultMaxConnections).
	MaxConnections int
	// MaxConnectionsPerClient bounds the open connections of one client address (IPv6: /64;
	// default a quarter of MaxConnections).
	MaxConnectionsPerClient int
	// TrustedProxies are the peers that count only against MaxConnections: their connections
	// carry many clients.
	TrustedProxies []netip.Prefix
	// Metrics receives the open connections and those the limits closed (default: none).
	Metrics Metrics
}

// Metrics is what a Limiter records.
type Metrics interface {
	// OpenConnections records how many connections are open.
	OpenConnections(n int)
	// ConnectionsLimited counts the connections the limits closed for one new connection:
	// idlePressure idle past the shortened keep-alive, shed waiting ones closed to admit it, and
	// the new one itself when refused.
	ConnectionsLimited(idlePressure, shed int, refused bool)
}

// New returns the limiter of the connections opts describe, after filling and checking its
// limits.
func New(opts Options) (*Limiter, error) {
	if err := connectionDefaults(&opts); err != nil {
		return nil, err
	}
	return newConnLimiter(opts.MaxConnections, opts.MaxConnectionsPerClient, opts.TrustedProxies, opts.Metrics), nil
}

// connectionDefaults fills the zero connection limits of opts and checks them.
func connectionDefaults(opts *Options) error {
	if opts.MaxConnections < 0 || opts.MaxConnectionsPerClient < 0 {
		return errors.New("connlimit: MaxConnections and MaxConnectionsPerClient must not be negative (0 takes the default)")
	}
	if opts.MaxConnections == 0 {
		opts.MaxConnections = DefaultMaxConnections
		if c, ok := Capacity(); ok {
			opts.MaxConnections = c
		}
	}
	if opts.MaxConnectionsPerClient == 0 {
		opts.MaxConnectionsPerClient = max(opts.MaxConnections/4, 1)
	}
	return CheckLimits(opts.MaxConnections, opts.MaxConnectionsPerClient)
}

// CheckLimits refuses a per-client connection limit above the global one; 0 for the global limit
// means the default, derived when the limiter is built, and is not checked here. New applies
// it; it is exported for callers that check settings before they build a server.
func CheckLimits(maxConnections, maxPerClient int) error {
	if maxConnections > 0 && maxPerClient > maxConnections {
		return errors.New("connlimit: MaxConnectionsPerClient must not exceed MaxConnections")
	}
	return nil
}

// waitClass orders waiting connections for shedding: lower classes go first.
type waitClass int

const (
	waitFresh  waitClass = iota // no request completed yet
	waitOnce                    // one request completed, then idle
	waitReused                  // several requests completed: a returning client
	waitClasses
)

// waitQueue holds waiting connections by class, each class in the order they began to wait.
type waitQueue [waitClasses]connList

// victim is the connection to shed first at now, or nil when none waits: a stalled fresh one
// (no complete request within freshGrace: a slowloris, or a connection opened and left), an
// idle one that completed a single request, one that has just connected, and last a reused
// idle one (a client that keeps coming back, like a renewing leader). Fresh ones go longest
// waiting first. Idle ones go most recently idle first: a flood's connections arrive fastest,
// so the newest idle one is most likely the flood's, while one that has waited a while belongs
// to a client that comes back at its own pace; and none waits past pressureIdleTimeout at a
// bound anyway.
func (q *waitQueue) victim(now time.Time) *trackedConn {
	if q == nil { // a client none of whose connections waits
		return nil
	}
	fresh := q[waitFresh].front()
	if fresh != nil && now.Sub(fresh.waitingFrom) >= freshGrace {
		return fresh
	}
	for _, c := range []*trackedConn{q[waitOnce].back(), fresh, q[waitReused].back()} {
		if c != nil {
			return c
		}
	}
	return nil
}

// waitedSince returns the connections that began to wait before t.
func (q *waitQueue) waitedSince(t time.Time) []*trackedConn {
	var out []*trackedConn
	for i := range q {
		for c := q[i].front(); c != nil && c.waitingFrom.Before(t); c = q[i].next(c) {
			out = append(out, c)
		}
	}
	return out
}

// Limiter bounds and sheds the connections of one listener (see the package comment): its
// Listener admits them, and its ConnState, the http.Server's hook, follows them.
type Limiter struct {
	max, perClient int
	proxies        []netip.Prefix
	metrics        Metrics
	now            func() time.Time

	mu      sync.Mutex
	open    int
	perAddr map[string]int
	waiting waitQueue // on the connections' limiterLink
	// byAddr are the waiting connections of each client with open connections, on their
	// clientLink; a client's queue goes with its last connection.
	byAddr  map[string]*waitQueue
	streams list.List // of *trackedConn carrying an SSE or watch stream, oldest first
}

func newConnLimiter(maxConns, perClient int, proxies []netip.Prefix, metrics Metrics) *Limiter {
	return &Limiter{max: maxConns, perClient: perClient, proxies: proxies, metrics: metrics, now: time.Now,
		perAddr: map[string]int{}, byAddr: map[string]*waitQueue{}}
}

// clientQueue is a new client's waitQueue.
func clientQueue() *waitQueue {
	q := new(waitQueue)
	for i := range q {
		q[i].link = clientLink
	}
	return q
}

// trackedConn is an accepted connection under the limiter's accounting.
type trackedConn struct {
	net.Conn
	limiter *Limiter
	client  string // "" for a trusted proxy: bounded only globally

	// Guarded by limiter.mu.
	released    bool
	requests    int
	waitingFrom time.Time
	// links are its places in limiter.waiting and limiter.byAddr[client], while waiting.
	links [connLinks]connLink
	// queue is limiter.byAddr[client], found once: a connection waits again after every
	// request, and the map's lookup hashed the client's address each time it began and ended
	// to wait. The client's queue lives as long as any of its connections is open.
	queue      *waitQueue
	class      waitClass
	streamElem *list.Element // in limiter.streams, while it carries a stream

	closeOnce sync.Once
	closeErr  error
}

// Close implements net.Conn: the connection's slot is free as soon as it closes.
func (c *trackedConn) Close() error {
	c.closeOnce.Do(func() {
		c.limiter.release(c)
		c.closeErr = c.Conn.Close()
	})
	return c.closeErr
}

// SyscallConn implements syscall.Conn, so that hijacked SSE streams are still written without
// blocking through their descriptor (package sse's fan-out).
func (c *trackedConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.New("connlimit: the connection has no descriptor")
}

// CloseWrite half-closes the connection as net/http does after refusing an oversized body.
func (c *trackedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

var _ syscall.Conn = (*trackedConn)(nil)

// Listener is ln with l applied to every connection it accepts.
func (l *Limiter) Listener(ln net.Listener) net.Listener {
	return &limitedListener{Listener: ln, limiter: l}
}

// limitedListener applies a Limiter to every connection it accepts.
type limitedListener struct {
	net.Listener
	limiter *Limiter
}

// Accept implements net.Listener: it returns the next admitted connection; refused ones are
// closed here and never reach the HTTP server.
func (l *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if tc := l.limiter.admit(c); tc != nil {
			return tc, nil
		}
	}
}

// clientOf is the per-client key of a connection's peer, "" when the peer is a trusted proxy
// (its connections carry many clients).
func (l *Limiter) clientOf(c net.Conn) string {
	return clientip.PeerKey(c.RemoteAddr().String(), l.proxies)
}

// admit accounts for a new connection, shedding waiting ones to make room; it returns nil
// (and closes c) when every connection in the way is busy.
func (l *Limiter) admit(c net.Conn) *trackedConn {
	tc := &trackedConn{Conn: c, limiter: l, client: l.clientOf(c)}
	var victims []*trackedConn
	var idleClosed int
	l.mu.Lock()
	now := l.now()
	// Under pressure, globally or from this client: shorten the idle keep-alive timeout by
	// closing the connections that have waited longer.
	var stale []*trackedConn
	if l.open >= l.max*3/4 {
		stale = l.waiting.waitedSince(now.Add(-pressureIdleTimeout))
	} else if q := l.byAddr[tc.client]; tc.client != "" && q != nil && l.perAddr[tc.client] >= l.perClient*3/4 {
		stale = q.waitedSince(now.Add(-pressureIdleTimeout))
	}
	for _, v := range stale {
		l.releaseLocked(v)
	}
	victims = append(victims, stale...)
	idleClosed = len(victims)
	refused := false
	if tc.client != "" && l.perAddr[tc.client] >= l.perClient {
		if v := l.byAddr[tc.client].victim(now); v != nil {
			l.releaseLocked(v)
			victims = append(victims, v)
		} else {
			refused = true
		}
	}
	if !refused && l.open >= l.max {
		v := l.waiting.victim(now)
		if v == nil && l.streams.Len() > 0 {
			v = l.streams.Front().Value.(*trackedConn)
		}
		if v != nil {
			l.releaseLocked(v)
			victims = append(victims, v)
		} else {
			refused = true
		}
	}
	if !refused {
		l.open++
		if tc.client != "" {
			l.perAddr[tc.client]++
		}
		l.waitLocked(tc, now)
		if l.metrics != nil {
			l.metrics.OpenConnections(l.open)
		}
	}
	l.mu.Unlock()

	for _, v := range victims {
		_ = v.Close()
	}
	if l.metrics != nil {
		l.metrics.ConnectionsLimited(idleClosed, len(victims)-idleClosed, refused)
	}
	if refused {
		_ = c.Close()
		return nil
	}
	return tc
}

// ConnState is the http.Server's ConnState hook: it moves connections in and out of the
// waiting queues.
func (l *Limiter) ConnState(c net.Conn, state http.ConnState) {
	tc, ok := c.(*trackedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if tc.released {
		return
	}
	switch state {
	case http.StateActive:
		tc.requests++
		l.unwaitLocked(tc)
	case http.StateHijacked: // an SSE stream handed to the hub's writers
		l.unwaitLocked(tc)
		l.streamLocked(tc)
	case http.StateIdle:
		l.unwaitLocked(tc)
		l.unstreamLocked(tc)
		l.waitLocked(tc, l.now())
	}
}

// connContextKey keys the request's *trackedConn in its context (see ConnContext).
type connContextKey struct{}

// ConnContext is the http.Server's ConnContext hook: it lets a handler find its connection
// (MarkStream).
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connContextKey{}, c)
}

// MarkStream tells the limiter that the request of ctx now carries a stream (a watch served by
// its handler), which may be shed like a hijacked one; the mark ends with the request.
func MarkStream(ctx context.Context) {
	tc, ok := ctx.Value(connContextKey{}).(*trackedConn)
	if !ok {
		return
	}
	tc.limiter.mu.Lock()
	defer tc.limiter.mu.Unlock()
	if !tc.released {
		tc.limiter.streamLocked(tc)
	}
}

func (l *Limiter) streamLocked(c *trackedConn) {
	if c.streamElem == nil {
		c.streamElem = l.streams.PushBack(c)
	}
}

func (l *Limiter) unstreamLocked(c *trackedConn) {
	if c.streamElem != nil {
		l.streams.Remove(c.streamElem)
		c.streamElem = nil
	}
}

// release frees c's slot (once; shedding may have done it already).
func (l *Limiter) release(c *trackedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !c.released {
		l.releaseLocked(c)
	}
}

func (l *Limiter) releaseLocked(c *trackedConn) {
	c.released = true
	l.unwaitLocked(c)
	l.unstreamLocked(c)
	l.open--
	if l.metrics != nil {
		l.metrics.OpenConnections(l.open)
	}
	if c.client != "" {
		if l.perAddr[c.client]--; l.perAddr[c.client] <= 0 {
			delete(l.perAddr, c.client)
			delete(l.byAddr, c.client)
		}
	}
}

func (l *Limiter) waitLocked(c *trackedConn, now time.Time) {
	c.class = min(waitClass(c.requests), waitReused)
	c.waitingFrom = now
	l.waiting[c.class].pushBack(c)
	if c.client != "" {
		if c.queue == nil {
			c.queue = l.byAddr[c.client]
			if c.queue == nil {
				c.queue = clientQueue()
				l.byAddr[c.client] = c.queue
			}
		}
		c.queue[c.class].pushBack(c)
	}
}

func (l *Limiter) unwaitLocked(c *trackedConn) {
	if c.links[limiterLink].queued {
		l.waiting[c.class].remove(c)
	}
	if c.links[clientLink].queued {
		c.queue[c.class].remove(c)
	}
}
