// Package connlimit bounds the open HTTP connections of a listener. Every accepted connection
// holds a file descriptor until it closes, and so does every file the store opens: without a
// bound, a flood of idle keep-alive or slowloris connections (headers trickling in) uses up
// RLIMIT_NOFILE, and then the store's own opens — a live leader's renewal — fail with "too many
// open files" and its lease lapses. So:
//
//   - at most MaxConnections are open at once (default: the descriptor limit less a reserve for
//     the store and the process), and at most MaxConnectionsPerClient from one client address
//     (IPv6: one /64; trusted proxies count only against the global bound);
//   - at a bound, a connection that is waiting for a request is closed to admit the new one
//     instead of refusing it, so that a fresh connection of a live leader is served whatever
//     the flood holds. Busy connections (a request being read or served) are never shed.
//     Streams (SSE and watch) are shed only at the global bound when nothing waits, the
//     oldest first: their clients reconnect, and a leader's renewal matters more. When every
//     connection is busy, the new one is closed at once;
//   - which waiting connection goes: a stalled one (no complete request a second after it
//     connected: a slowloris, or a connection opened and left), then an idle keep-alive one
//     that completed a single request, then one that has just connected, and last a reused
//     one (a client that keeps coming back, like a renewing leader) — see waitQueue.victim;
//   - under pressure (above three quarters of MaxConnections, or of MaxConnectionsPerClient
//     for the client connecting) the idle keep-alive timeout shrinks from the server's 120 s
//     to pressureIdleTimeout (5 s): each new connection first closes those that have waited longer.
//
// Go (1.19 and later) already raises the soft RLIMIT_NOFILE to one below the hard limit at
// start on Linux, so the limits are derived from the raised value; nothing here raises it.
package connlimit
