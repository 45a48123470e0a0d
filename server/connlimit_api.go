package server

import (
	"context"
	"errors"
	"net"
	"net/http"
)

// LimitConnections bounds the connections srv serves from ln the way Serve bounds its own
// (connlimit.go): at most maxConnections open at once and maxPerClient from one client address
// (IPv6: one /64); at a bound a connection waiting for a request is closed to admit the new
// one, and under pressure the idle keep-alive timeout shrinks to a few seconds. 0 takes Serve's
// defaults: ConnectionCapacity, and a quarter of maxConnections. No client is a trusted proxy,
// and nothing is measured.
//
// It sets srv.ConnState and srv.ConnContext, which must be unset, and returns the listener to
// serve on. It is for other programs' servers, such as the demo's.
func LimitConnections(srv *http.Server, ln net.Listener, maxConnections, maxPerClient int) (net.Listener, error) {
	if srv.ConnState != nil || srv.ConnContext != nil {
		return nil, errors.New("server: LimitConnections sets the http.Server's ConnState and ConnContext: leave them unset")
	}
	opts := Options{MaxConnections: maxConnections, MaxConnectionsPerClient: maxPerClient}
	if err := connectionDefaults(&opts); err != nil {
		return nil, err
	}
	limiter := newConnLimiter(opts.MaxConnections, opts.MaxConnectionsPerClient, nil, nil)
	srv.ConnState = limiter.connState
	srv.ConnContext = withConn
	return &limitedListener{Listener: ln, limiter: limiter}, nil
}

// MarkStream tells the limiter of LimitConnections that the request of ctx now carries a
// long-lived stream (SSE): at the global bound, when no connection waits, streams are shed,
// the oldest first, to admit new connections. The mark ends with the request.
func MarkStream(ctx context.Context) { markStream(ctx) }
