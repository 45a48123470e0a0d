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
// also wraps the last connection error, so errors.As finds an *HTTPError behind it.
var ErrInitialTimeout = errors.New("swarmlease: no state within the initial timeout")

// ErrNoHolder is returned by WaitForHolder when the election had no holder within the timeout.
var ErrNoHolder = errors.New("swarmlease: no holder within the timeout")

// HTTPError is a response other than the event stream. Its fields come from the server's error
// JSON ({"error", "code", "details", "request_id", "retry_after_ms"}) when the body has that
// shape; a proxy's answer in front of the controller leaves them empty.
type HTTPError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Code is the server's stable, machine-readable error code ("too_many_clients", ...).
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
func (e *HTTPError) Error() string {
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

// maxErrorBody bounds how much of an error response is read: enough for the server's JSON,
// not a proxy's whole HTML page.
const maxErrorBody = 64 << 10

// httpErrorOf builds the error of a non-200 response, consuming (part of) its body.
func httpErrorOf(resp *http.Response) *HTTPError {
	e := &HTTPError{StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Request-Id")}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var wire struct {
		Message      string `json:"error"`
		Code         string `json:"code"`
		Details      string `json:"details"`
		RequestID    string `json:"request_id"`
		RetryAfterMS int64  `json:"retry_after_ms"`
	}
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
