// Package controller is the HTTP API of the election a contender serves: /v1/info (the
// election and this process's identity), /v1/state (the newest snapshot of one watcher of the
// election) and /v1/events (the SSE stream of holder and fence changes, fanned out by an
// sse.Hub).
package controller
