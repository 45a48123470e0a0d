// Package controllers is demo serve's way to the controller service: a round tripper that reaches
// a replica that answers.
//
// A paused or frozen controller (docker pause, SIGSTOP, a stuck node) still accepts connections
// — its kernel completes the handshake — but never answers. Behind DNS round robin or a virtual
// IP, each new connection reaches some replica, the stalled one as likely as any: a page that
// reconnects to a stalled replica again and again would show a takeover only after several
// header timeouts and back-offs. So a request without a body that gets no answer in time is sent
// again at once on a new connection, and when the service's name resolves to several addresses
// (DNS round robin) the dial tries those that failed lately last.
package controllers

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sync"
	"time"
)

// Timings of the way to the controllers. A controller answers a request's headers at once (an
// event stream sends its headers and its first event together), so two seconds without them
// means a stalled replica, not a slow one.
const (
	// HeaderTimeout bounds the wait for a response's headers on one connection.
	HeaderTimeout = 2 * time.Second
	// DialTimeout bounds one connection attempt to one address.
	DialTimeout = 2 * time.Second
	// attempts is how many replicas a request without a body is sent to before it fails: the
	// stack runs three controllers.
	attempts = 3
	// failedFor is how long an address that failed is tried after the others.
	failedFor = 30 * time.Second
	// maxFailed bounds the table of failed addresses (a service rescheduled again and again
	// leaves many behind).
	maxFailed = 1024
)

// LookupHost resolves a host name to its addresses, as net.Resolver.LookupHost does.
type LookupHost func(ctx context.Context, host string) ([]string, error)

// Transport is an http.RoundTripper to the controller service; see the package comment.
type Transport struct {
	base   *http.Transport
	lookup LookupHost
	dialer net.Dialer
	now    func() time.Time

	mu     sync.Mutex
	failed map[string]time.Time // "ip:port" → when a request or dial there last failed
}

// NewTransport returns a Transport that resolves host names with lookup (nil: the system's
// resolver).
func NewTransport(lookup LookupHost) *Transport {
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	t := &Transport{lookup: lookup, dialer: net.Dialer{Timeout: DialTimeout}, now: time.Now, failed: map[string]time.Time{}}
	t.base = &http.Transport{
		Proxy:                 nil,
		DialContext:           t.dial,
		ResponseHeaderTimeout: HeaderTimeout,
		IdleConnTimeout:       30 * time.Second,
		MaxIdleConnsPerHost:   8,
	}
	return t
}

// RoundTrip sends req to a replica; one that does not answer in time is marked failed, and a
// request without a body is then sent to another, up to attempts in all.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	again := (req.Method == http.MethodGet || req.Method == http.MethodHead) && (req.Body == nil || req.Body == http.NoBody)
	for attempt := 1; ; attempt++ {
		var remote string
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { remote = info.Conn.RemoteAddr().String() }}
		resp, err := t.base.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
		if err == nil {
			return resp, nil
		}
		if req.Context().Err() != nil {
			return nil, err // the caller gave up: no replica is to blame
		}
		if remote != "" {
			t.markFailed(remote)
		}
		// The pool may hold more connections to the stalled replica: the next attempt dials,
		// and the dial tries it last.
		t.base.CloseIdleConnections()
		if !again || attempt == attempts {
			return nil, err
		}
	}
}

// CloseIdleConnections closes the idle connections to every replica.
func (t *Transport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// dial connects to one of addr's addresses: in random order, those that failed lately last.
func (t *Transport) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := t.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	targets := make([]string, len(ips))
	for i, ip := range ips {
		targets[i] = net.JoinHostPort(ip, port)
	}
	rand.Shuffle(len(targets), func(i, j int) { targets[i], targets[j] = targets[j], targets[i] })
	t.failedLast(targets)
	var errs []error
	for _, target := range targets {
		conn, err := t.dialer.DialContext(ctx, network, target)
		if err == nil {
			return conn, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		t.markFailed(target)
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// failedLast orders targets in place: those that did not fail in the last failedFor first (in
// their order), then the failed ones, the longest ago first.
func (t *Transport) failedLast(targets []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	since := t.now().Add(-failedFor)
	failedAt := func(target string) time.Time {
		if at, ok := t.failed[target]; ok && at.After(since) {
			return at
		}
		return time.Time{}
	}
	slices.SortStableFunc(targets, func(a, b string) int { return failedAt(a).Compare(failedAt(b)) })
}

// markFailed records that target did not answer.
func (t *Transport) markFailed(target string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if len(t.failed) >= maxFailed {
		for k, at := range t.failed {
			if now.Sub(at) > failedFor {
				delete(t.failed, k)
			}
		}
		if len(t.failed) >= maxFailed {
			clear(t.failed)
		}
	}
	t.failed[target] = now
}
