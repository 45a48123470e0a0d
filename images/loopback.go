package images

import (
	"net"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// loopbackHTTP is the transport of every registry call: it sends a request for a loopback
// registry — an address of 127.0.0.0/8 or ::1, or localhost — over plain HTTP, as Docker treats
// those registries, and any other over the scheme asked for. go-containerregistry alone would
// first try HTTPS (a TLS handshake that a loopback registry answers with garbage) and speak
// HTTPS only to 127.0.0.2 and the rest of 127.0.0.0/8.
type loopbackHTTP struct{ next http.RoundTripper }

// RoundTrip sends r, over plain HTTP when its host is loopback.
func (t loopbackHTTP) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme == "https" && isLoopback(r.URL.Hostname()) {
		r = r.Clone(r.Context())
		r.URL.Scheme = "http"
	}
	return t.next.RoundTrip(r)
}

// isLoopback reports whether host (without a port) is a loopback address or localhost.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackTransport is the transport of the package's registry calls.
func loopbackTransport() remote.Option {
	return remote.WithTransport(loopbackHTTP{next: remote.DefaultTransport})
}
