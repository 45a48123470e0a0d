package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
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
	return newError(RequestID(ctx), status, code, message, details)
}

// newError is NewError for the request whose ID is requestID.
func newError(requestID string, status int, code, message, details string) *ErrorBody {
	if details == "" {
		details = message // the contract has details on every error
	}
	return &ErrorBody{status: status, Code: code, Message: message, Details: details, RequestID: requestID}
}

// codeForStatus is the default code of an error huma creates (validation, not found, ...).
func codeForStatus(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusUnsupportedMediaType:
		// The elections contract's code for every malformed request.
		return "invalid_input"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusServiceUnavailable:
		return "unavailable"
	}
	if status >= 500 {
		return "internal_error"
	}
	return strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))
}

// installErrorModel makes huma produce ErrorBody for every error it creates itself
// (validation, unknown content type, internal errors).
func installErrorModel() {
	huma.NewErrorWithContext = func(hctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
		var details []string
		for _, err := range errs {
			var detail *huma.ErrorDetail
			switch {
			case err == nil:
			case errors.As(err, &detail):
				// Location and message only: the rejected value may be a leader token.
				details = append(details, strings.TrimSpace(detail.Location+": "+detail.Message))
			default:
				details = append(details, err.Error())
			}
		}
		ctx := context.Background()
		if hctx != nil {
			ctx = hctx.Context()
		}
		var tooLarge *http.MaxBytesError
		for _, err := range errs {
			if errors.As(err, &tooLarge) {
				// Our body limit cut huma's read short: the client's error, not ours.
				return NewError(ctx, http.StatusRequestEntityTooLarge, "invalid_input", "request body too large",
					fmt.Sprintf("the body may have at most %d bytes", tooLarge.Limit))
			}
		}
		return NewError(ctx, status, codeForStatus(status), msg, strings.Join(details, "; "))
	}
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		return huma.NewErrorWithContext(nil, status, msg, errs...)
	}
}

// writeError writes an ErrorBody from a plain handler.
func writeError(w http.ResponseWriter, r *http.Request, status int, code, message, details string) {
	writeBody(w, status, NewError(r.Context(), status, code, message, details))
}

// writeBody writes a JSON body from a plain handler.
func writeBody(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// retryAfter is what a 503 asks clients to wait.
const retryAfter = 5 * time.Second

// writeRetryable writes a 503 with Retry-After and retry_after_ms.
func writeRetryable(w http.ResponseWriter, r *http.Request, code, message, details string) {
	body := NewError(r.Context(), http.StatusServiceUnavailable, code, message, details)
	body.retry(retryAfter)
	writeErrorBody(w, body)
}

// writeErrorBody writes an ErrorBody with its status and headers from a plain handler.
func writeErrorBody(w http.ResponseWriter, body *ErrorBody) {
	for k, v := range body.GetHeaders() {
		w.Header()[k] = v
	}
	writeBody(w, body.status, body)
}

// writeOperationError writes an ErrorBody that a huma operation's handler returned, as huma
// writes it: its headers appended, the Content-Type its ContentType gives JSON, the status,
// then the body in the API's JSON format (without HTML escaping, unlike writeBody's). The
// elections fast path answers with it what the same operation would through huma.
func writeOperationError(w http.ResponseWriter, body *ErrorBody) {
	h := w.Header()
	for k, values := range body.GetHeaders() {
		for _, v := range values {
			h.Add(k, v)
		}
	}
	h.Set("Content-Type", body.ContentType("application/json"))
	w.WriteHeader(body.status)
	_ = strictJSON.Marshal(w, body)
}

// retry sets Retry-After (whole seconds) and retry_after_ms to the same delay.
func (b *ErrorBody) retry(d time.Duration) {
	d = wholeSeconds(d)
	b.RetryAfterMS = d.Milliseconds()
	if b.headers == nil {
		b.headers = http.Header{}
	}
	b.headers.Set("Retry-After", strconv.Itoa(int(d/time.Second)))
}

// recoverPanics turns a panic in a handler into a logged 500 in the one error shape, with the
// request's ID in both, instead of a bare 500 and a stack on stderr. http.ErrAbortHandler keeps
// its meaning (abort the response silently).
func recoverPanics(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					answerPanic(log, w, r, RequestID(r.Context()), v)
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// answerPanic is recoverPanics' answer to the panic v of the request requestID.
func answerPanic(log *slog.Logger, w http.ResponseWriter, r *http.Request, requestID string, v any) {
	if v == http.ErrAbortHandler {
		panic(v)
	}
	log.Error("handler panic", "request_id", requestID, "method", r.Method, "path", r.URL.Path,
		"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	writeBody(w, http.StatusInternalServerError, newError(requestID, http.StatusInternalServerError, "internal_error", "internal error",
		"see the server log for "+requestID))
}
