package wire

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// ErrorBody is the one JSON shape of every error response.
type ErrorBody struct {
	// Message says what went wrong, for people.
	Message string `json:"error" doc:"What went wrong, for people." example:"election not found"`
	// Code is stable and machine-readable.
	Code string `json:"code" doc:"Stable, machine-readable error code." example:"not_found"`
	// Details adds specifics (the invalid field, the store's answer), when any.
	Details string `json:"details" doc:"Specifics: the invalid field, what to do. Never secrets."`
	// RequestID is the request's ID, also in the X-Request-Id header.
	RequestID string `json:"request_id" doc:"The request's ID, also in the X-Request-Id header." example:"req_4f6c1d0e9a8b7c6d5e4f3a2b1c0d9e8f"`
	// RetryAfterMS is set where retrying makes sense.
	RetryAfterMS int64 `json:"retry_after_ms,omitempty" doc:"How long to wait before retrying, where retrying makes sense."`

	status  int
	headers http.Header
}

// GetHeaders implements huma.HeadersError: errors are never cached, and Retry-After goes with
// retry_after_ms.
func (e *ErrorBody) GetHeaders() http.Header {
	h := e.headers.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Cache-Control", "no-store")
	return h
}

// Error implements error.
func (e *ErrorBody) Error() string { return e.Message }

// GetStatus implements huma.StatusError.
func (e *ErrorBody) GetStatus() int { return e.status }

// ContentType implements huma.ContentTypeFilter: errors are plain JSON.
func (e *ErrorBody) ContentType(string) string { return "application/json" }

// NewError returns an error response with status and code, for the request of ctx.
func NewError(ctx context.Context, status int, code, message, details string) *ErrorBody {
	return NewErrorFor(RequestID(ctx), status, code, message, details)
}

// NewErrorFor is NewError for the request whose ID is requestID: the elections fast path has
// the ID, not a context that holds it.
func NewErrorFor(requestID string, status int, code, message, details string) *ErrorBody {
	details = cmp.Or(details, message) // the contract has details on every error
	return &ErrorBody{status: status, Code: code, Message: message, Details: details, RequestID: requestID}
}

// RetryAfter is what a 503 asks clients to wait.
const RetryAfter = 5 * time.Second

// SetRetry sets Retry-After (whole seconds) and retry_after_ms to the same delay.
func (e *ErrorBody) SetRetry(d time.Duration) {
	d = WholeSeconds(d)
	e.RetryAfterMS = d.Milliseconds()
	if e.headers == nil {
		e.headers = http.Header{}
	}
	e.headers.Set("Retry-After", strconv.Itoa(int(d/time.Second)))
}

// WholeSeconds rounds d up to whole seconds, at least one: Retry-After's unit.
func WholeSeconds(d time.Duration) time.Duration {
	s := (d + time.Second - 1) / time.Second
	return max(s, 1) * time.Second
}

// WriteError writes an ErrorBody from a plain handler.
func WriteError(w http.ResponseWriter, r *http.Request, status int, code, message, details string) {
	WriteJSON(w, status, NewError(r.Context(), status, code, message, details))
}

// WriteJSON writes a JSON body from a plain handler.
func WriteJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// WriteRetryable writes a 503 with Retry-After and retry_after_ms.
func WriteRetryable(w http.ResponseWriter, r *http.Request, code, message, details string) {
	body := NewError(r.Context(), http.StatusServiceUnavailable, code, message, details)
	body.SetRetry(RetryAfter)
	WriteErrorBody(w, body)
}

// WriteErrorBody writes an ErrorBody with its status and headers from a plain handler.
func WriteErrorBody(w http.ResponseWriter, body *ErrorBody) {
	for k, v := range body.GetHeaders() {
		w.Header()[k] = v
	}
	WriteJSON(w, body.status, body)
}

// WriteOperationError writes an ErrorBody that a huma operation's handler returned, as huma
// writes it: its headers appended, the Content-Type its ContentType gives JSON, the status,
// then the body in the API's JSON format (without HTML escaping, unlike WriteJSON's). The
// elections fast path answers with it what the same operation would through huma.
func WriteOperationError(w http.ResponseWriter, body *ErrorBody) {
	h := w.Header()
	for k, values := range body.GetHeaders() {
		for _, v := range values {
			h.Add(k, v)
		}
	}
	h.Set("Content-Type", body.ContentType("application/json"))
	w.WriteHeader(body.status)
	_ = Marshal(w, body)
}
