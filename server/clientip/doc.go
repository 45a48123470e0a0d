// Package clientip names the client of a request or a connection, for the limits that are kept
// per client: the elections API's admission budget and watch streams, and the connection
// limiter's per-client bound.
//
// A client is its peer address or — only when the peer is a configured trusted proxy — the
// nearest address in X-Forwarded-For that is not itself a trusted proxy. An IPv6 client is its
// /64: one host commonly holds a whole /64, and keying single addresses would give it unlimited
// budgets.
package clientip
