package wire

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/danielgtaylor/huma/v2"
)

// errorModelInstalled: InstallErrorModel has run.
var (
	errorModelInstalled atomic.Bool
	installErrorModel   sync.Once
)

// InstallErrorModel makes huma produce ErrorBody for every error it creates itself (validation,
// unknown content type, internal errors), and document ErrorBody as every operation's error.
// huma keeps its error constructors in package variables, so this changes every huma API of the
// process: a program calls it once, at start, before it builds a server (the commands that serve
// the API do; a server refuses to be built without it). Calling it again changes nothing, and
// concurrent calls (tests that build servers in parallel) write huma's variables once.
func InstallErrorModel() {
	installErrorModel.Do(func() {
		huma.NewErrorWithContext = newHumaError
		huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
			return newHumaError(nil, status, msg, errs...)
		}
		errorModelInstalled.Store(true)
	})
}

// ErrorModelInstalled reports whether InstallErrorModel has run.
func ErrorModelInstalled() bool { return errorModelInstalled.Load() }

// newHumaError is the ErrorBody of an error huma creates for the request of hctx (nil when
// huma documents its error type).
func newHumaError(hctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
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
