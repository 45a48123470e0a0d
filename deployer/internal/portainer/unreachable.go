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

// transportError turns a failed exchange (no HTTP answer) into an error that says Portainer is
// unreachable at the configured address and what to check. The cause is the dialer's or TLS
// stack's own error, which names the address but never a credential: the URL holds none, and
// credentials travel in headers only.
func (c *Client) transportError(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("portainer: %s: %w", op, ctxErr)
	}
	var urlErr *url.Error
	cause := err
	if errors.As(err, &urlErr) {
		cause = urlErr.Err
	}
	hint := "check Options.URL, that Portainer is running and listening there, and that this machine can reach it"
	if isTLSError(cause) {
		hint = "the TLS handshake failed: check Options.CAFile (the CA that signs Portainer's certificate) and that the URL's host name is in the certificate"
	}
	return fmt.Errorf("portainer: %s: %w at %s: %v; %s", op, ErrUnreachable, c.display(), cause, hint)
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
