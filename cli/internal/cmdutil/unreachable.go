package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
)

// UnreachableError is a store, or a server the command talks to — an elections server, a
// controller — that did not answer (exit 5): said as the cause first, then what to do.
type UnreachableError struct {
	// What names it and where it is ("the elections server at http://…", "swarm store at
	// unix:///var/run/docker.sock").
	What string
	// Fix says what to do.
	Fix string
	// Err is the failure.
	Err error
}

// Error is the cause, then the fix.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach %s (%s): %s", e.What, Cause(e.Err), e.Fix)
}

// Unwrap returns Err.
func (e *UnreachableError) Unwrap() error { return e.Err }

// NoAnswer reports an error of a request that got no answer from its server — refused, reset,
// unknown host, timed out — as opposed to an answer the server gave (a *swarmlease.APIError).
// A watch that received no state within its initial timeout is one too.
func NoAnswer(err error) bool {
	var api *swarmlease.APIError
	var uerr *url.Error
	if errors.Is(err, swarmlease.ErrInitialTimeout) {
		return !errors.As(err, &api)
	}
	return errors.As(err, &uerr) && !errors.As(err, &api)
}

// Cause is the innermost cause of a failed request, in a few words: "connection refused",
// "no such host elect", "no answer in time", else the error itself.
func Cause(err error) string {
	var errno syscall.Errno
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		return "no such host " + dns.Name
	case errors.As(err, &errno):
		return errno.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, swarmlease.ErrInitialTimeout):
		return "no answer in time"
	}
	return err.Error()
}
