// Package wire is what every answer of the HTTP API shares on the wire, whichever API serves
// it: the one error shape (ErrorBody, written by plain handlers, huma operations and the
// elections fast path alike, and by huma itself once InstallErrorModel has run), the request
// ID every answer carries, the contract's timestamps, and the one reader of JSON request
// bodies (Decode), whose first part (DecodeFast) the elections fast path shares with huma.
//
// Every response carries an X-Request-Id header, and every error has one JSON shape:
// {"error", "code", "details", "request_id"} (+ "retry_after_ms" where retrying makes sense).
package wire
