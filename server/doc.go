// Package server is the HTTP API of lfp-swarm-lease, wired together: a Server serves the
// controller endpoints of one election (package controller), the elections ("rooms") API
// (package elections), or both, beside /healthz and /readyz (package health), Prometheus
// metrics, the OpenAPI 3.1 contract generated from the handlers' own types (Contract), and
// offline interactive docs.
//
// Every request passes the middleware (package middleware: its ID, the answer to a panic,
// CORS), then the elections fast path, then the router; every answer shares the wire package's
// error shape and request ID; both APIs' streams run on package sse; connections are bounded by
// package connlimit. Each package records what it measures through a narrow interface of its
// own, which Metrics implements.
//
// Two settings belong to the process, not to a server, and are made by the commands that serve
// the API, once, at start: huma's error model (wire.InstallErrorModel, without which New
// refuses) and the garbage collector's heap floor (heapfloor.Keep).
//
// Authentication, when needed, belongs in middleware or a reverse proxy in front.
package server
