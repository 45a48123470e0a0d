// Package server is the HTTP API of lfp-swarm-lease: the controller endpoints every contender
// serves (health, readiness, the election's state and its change stream over SSE), the OpenAPI
// 3.1 contract generated from the handlers' own types, offline interactive docs, and Prometheus
// metrics.
//
// Every response carries an X-Request-Id header, and every error has one JSON shape:
// {"error", "code", "details", "request_id"} (+ "retry_after_ms" where retrying makes sense).
// Authentication, when needed, belongs in middleware or a reverse proxy in front.
package server
