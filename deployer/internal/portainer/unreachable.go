package portainer

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// UnreachableError is a call that got no HTTP answer: Portainer is unreachable at the
// configured address. It matches ErrUnreachable. Cause is the dialer's or TLS stack's own error,
// which names the address but never a credential: the URL holds none, and credentials travel in
// headers only.
type UnreachableError struct {
	// Op names the call, e.g. "endpoint 1".
	Op string
	// Address is the configured address, without /api.
	Address string
	// Cause is why no answer came.
	Cause error
	// TLS: the TLS handshake failed (the certificate, or plain HTTP on an https URL).
	TLS bool
}

// Error reads "portainer: OP: portainer: unreachable at ADDRESS: CAUSE; HINT", the hint naming
// the options to check.
func (e *UnreachableError) Error() string {
	hint := "check Options.URL, that Portainer is running and listening there, and that this machine can reach it"
	if e.TLS {
		hint = "the TLS handshake failed: check Options.CAFile (the CA that signs Portainer's certificate) and that the URL's host name is in the certificate"
	}
	return fmt.Sprintf("portainer: %s: %v at %s: %v; %s", e.Op, ErrUnreachable, e.Address, e.Cause, hint)
}

// Is matches ErrUnreachable.
func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }

// transportError turns a failed exchange (no HTTP answer) into an *UnreachableError, or the
// context's error when the call was cancelled.
func (c *Client) transportError(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("portainer: %s: %w", op, ctxErr)
	}
	var urlErr *url.Error
	cause := err
	if errors.As(err, &urlErr) {
		cause = urlErr.Err
	}
	return &UnreachableError{Op: op, Address: c.display(), Cause: cause, TLS: isTLSError(cause)}
}

// display is the configured address without /api, for messages.
func (c *Client) display() string {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/api")
	return u.String()
}

func isTLSError(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		record   tls.RecordHeaderError
		authErr  x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		certErr  x509.CertificateInvalidError
		alertErr tls.AlertError
	)
	return errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &authErr) ||
		errors.As(err, &hostErr) || errors.As(err, &certErr) || errors.As(err, &alertErr) ||
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client")
}
