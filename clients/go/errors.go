package swarmlease

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrInitialTimeout ends a watch that received no state within the initial timeout. The error
// also wraps the last connection error, so errors.As finds an *APIError behind it.
var ErrInitialTimeout = errors.New("swarmlease: no state within the initial timeout")

// ErrNoHolder is returned by WaitForHolder when the election had no holder within the timeout.
var ErrNoHolder = errors.New("swarmlease: no holder within the timeout")

// Errors of the elections API, matched with errors.Is against the *APIError a call returns
// (by its code, and for ErrVacant and ErrHeldByOther also its status) and against the errors
// of arguments the client refuses before sending anything.
var (
	// ErrLeaseNotCurrent: the token's term no longer holds the room (code lease_not_current):
	// either ErrVacant or ErrHeldByOther.
	ErrLeaseNotCurrent = errors.New("swarmlease: lease not current")
	// ErrVacant: 404 lease_not_current — the room is vacant or the lease expired.
	ErrVacant = errors.New("swarmlease: the room is vacant or the lease expired")
	// ErrHeldByOther: 400 lease_not_current — another term holds the room now.
	ErrHeldByOther = errors.New("swarmlease: another term holds the room")
	// ErrRateLimited: 429 rate_limited; APIError.RetryAfter says when to retry.
	ErrRateLimited = errors.New("swarmlease: rate limited")
	// ErrCapacityExceeded: 409 capacity_exceeded — the server's active-room limit is reached;
	// APIError.RetryAfter says when to retry.
	ErrCapacityExceeded = errors.New("swarmlease: capacity exceeded")
	// ErrInvalidInput: invalid_input — a malformed room id, candidate id, metadata or token.
	ErrInvalidInput = errors.New("swarmlease: invalid input")
	// ErrInvalidTTL: invalid_ttl — the TTL is not a whole number of seconds from 5 to 300.
	ErrInvalidTTL = errors.New("swarmlease: invalid ttl")
	// ErrForbidden: 403 forbidden — the server's elections API is disabled.
	ErrForbidden = errors.New("swarmlease: elections are disabled on the server")
)

// APIError is a response other than the expected one: a non-2xx answer of an elections call,
// or an answer other than the event stream. Its fields come from the server's error JSON
// ({"error", "code", "details", "request_id", "retry_after_ms"}) when the body has that shape;
// a proxy's answer in front of the server leaves them empty. It never contains a leader token:
// the server never echoes one.
type APIError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Code is the server's stable, machine-readable error code ("lease_not_current",
	// "rate_limited", ...). errors.Is matches the package's sentinels against it.
	Code string
	// Message says what went wrong, for people.
	Message string
	// Details adds specifics, when any.
	Details string
	// RequestID identifies the request in the server's logs (body or X-Request-Id header).
	RequestID string
	// RetryAfter is how long the server asked the client to wait (zero when it did not say).
	RetryAfter time.Duration
}

// Error implements error.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "swarmlease: HTTP %d", e.StatusCode)
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Details != "" {
		fmt.Fprintf(&b, " (%s)", e.Details)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request %s]", e.RequestID)
	}
	return b.String()
}

// Is reports whether the error is target, one of the elections sentinels (ErrLeaseNotCurrent,
// ErrVacant, ErrHeldByOther, ErrRateLimited, ErrCapacityExceeded, ErrInvalidInput, ErrInvalidTTL,
// ErrForbidden), by the contract's code and status.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrLeaseNotCurrent:
		return e.Code == "lease_not_current"
	case ErrVacant:
		return e.Code == "lease_not_current" && e.StatusCode == http.StatusNotFound
	case ErrHeldByOther:
		return e.Code == "lease_not_current" && e.StatusCode != http.StatusNotFound
	case ErrRateLimited:
		return e.Code == "rate_limited" || (e.Code == "" && e.StatusCode == http.StatusTooManyRequests)
	case ErrCapacityExceeded:
		return e.Code == "capacity_exceeded"
	case ErrInvalidInput:
		return e.Code == "invalid_input"
	case ErrInvalidTTL:
		return e.Code == "invalid_ttl"
	case ErrForbidden:
		return e.Code == "forbidden"
	}
	return false
}

// temporary reports whether retrying the same request later can succeed: rate and capacity
// limits, timeouts, server-side failures and answers from something other than the server. Every other answer (a refused input,
// disabled elections, an unknown route) stays the same however often it is asked.
//
// An answer without the server's error code did not come from an elections server — a proxy
// in front of it (a 404 while the service has no healthy task, a 502) — and says nothing
// about the room: it counts as temporary.
func (e *APIError) temporary() bool {
	switch {
	case e.Code == "", e.StatusCode == http.StatusTooManyRequests, e.StatusCode == http.StatusRequestTimeout,
		e.Code == "capacity_exceeded", e.StatusCode >= 500:
		return true
	}
	return false
}

// maxErrorBody bounds how much of an error response is read: enough for the server's JSON,
// not a proxy's whole HTML page.
const maxErrorBody = 64 << 10

// wireError is the server's one error body.
type wireError struct {
	Message      string `json:"error"`
	Code         string `json:"code"`
	Details      string `json:"details"`
	RequestID    string `json:"request_id"`
	RetryAfterMS int64  `json:"retry_after_ms"`
}

// apiErrorOf builds the error of a non-200 response, consuming (part of) its body.
func apiErrorOf(resp *http.Response) *APIError {
	e := &APIError{StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Request-Id")}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var wire wireError
	if json.Unmarshal(body, &wire) == nil {
		e.Message, e.Code, e.Details = wire.Message, wire.Code, wire.Details
		if wire.RequestID != "" {
			e.RequestID = wire.RequestID
		}
		e.RetryAfter = time.Duration(wire.RetryAfterMS) * time.Millisecond
	} else if text := strings.TrimSpace(string(body)); text != "" && len(text) <= 200 {
		// A proxy's short plain-text answer ("Bad Gateway") is still worth showing.
		e.Message = text
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	// The header is what the server sets for too_many_clients; seconds only (an HTTP date
	// from a proxy is rare enough to ignore).
	if secs, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && secs > 0 {
		if d := time.Duration(secs) * time.Second; d > e.RetryAfter {
			e.RetryAfter = d
		}
	}
	return e
}
