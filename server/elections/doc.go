// Package elections is the elections ("rooms") API: the wire contract of docs/elections-api.md
// on top of a rooms.Manager — create, status, campaign, renew, resign and the watch stream —
// with its admission budget and its limits.
//
// Status, campaign, renew and resign are served twice over, with one answer: as huma
// operations behind the router, and by the fast path (ServeFast), which the server runs ahead
// of the router for the plain requests clients send. Both run the same checks (gate), the same
// operations and the same mapping of engine errors (fail), and write the same bytes (Marshal).
package elections
