package portainer

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Sentinel errors that an *APIError matches with errors.Is according to its status code (and,
// for the not-found pair, the object the call looked for).
var (
	// ErrUnauthorized: 401 — the API key is unknown, or the JWT expired and logging in again
	// did not help.
	ErrUnauthorized = errors.New("portainer: unauthorized")
	// ErrForbidden: 403 — the user's role may not do this, the address is banned after too many
	// logins, or a CSRF check failed.
	ErrForbidden = errors.New("portainer: forbidden")
	// ErrConflict: 409 — a stack of that name already exists (in Portainer or deployed outside
	// it).
	ErrConflict = errors.New("portainer: conflict")
	// ErrEndpointNotFound: the environment (endpoint) does not exist.
	ErrEndpointNotFound = errors.New("portainer: endpoint not found")
	// ErrStackNotFound: the stack record does not exist.
	ErrStackNotFound = errors.New("portainer: stack not found")
	// ErrUnreachable: no HTTP answer at all — connection refused, DNS or TLS failure.
	ErrUnreachable = errors.New("portainer: unreachable")
)

// APIError is a non-2xx answer from Portainer. Message and Details come from Portainer's JSON
// error body ({"message","details"}), or from a plain-text body cut to a bounded size; any
// credential or secret value the client knows of is replaced by "[REDACTED]" in both.
type APIError struct {
	// Op names the call, e.g. "create stack demo".
	Op string
	// StatusCode is the HTTP status.
	StatusCode int
	// Message is Portainer's message (for a failed deploy: the docker CLI's stderr).
	Message string
	// Details is Portainer's details field, often the underlying error.
	Details string

	// also maps a status code to the sentinel it means for this call beyond the table in Is:
	// a 404 is ErrEndpointNotFound or ErrStackNotFound by what the call looked for, and a
	// failed login (422) is ErrUnauthorized.
	also map[int]error
}

// Error reads "portainer: create stack demo: 409 Conflict: <message> (<details>)". Details
// that only repeat the message or the status — Portainer's details of a failed deploy are its
// message capitalised, those of a 401 "Unauthorized" — are left out.
func (e *APIError) Error() string {
	status := http.StatusText(e.StatusCode)
	s := fmt.Sprintf("portainer: %s: %d %s", e.Op, e.StatusCode, status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Details != "" && !strings.EqualFold(e.Details, e.Message) && !strings.EqualFold(e.Details, status) {
		s += " (" + e.Details + ")"
	}
	return s
}

// Is matches the sentinel errors by status code.
func (e *APIError) Is(target error) bool {
	switch {
	case e.StatusCode == http.StatusUnauthorized && target == ErrUnauthorized,
		e.StatusCode == http.StatusForbidden && target == ErrForbidden,
		e.StatusCode == http.StatusConflict && target == ErrConflict:
		return true
	}
	return target != nil && e.also[e.StatusCode] == target
}
