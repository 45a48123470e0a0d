package images

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
)

// firstBytes is a listener that notes whether each connection opened with a TLS handshake
// (its first byte 0x16, a handshake record) before the HTTP server reads it.
type firstBytes struct {
	net.Listener
	mu  sync.Mutex
	tls int
	all int
}

func (l *firstBytes) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	r := bufio.NewReader(c)
	first, err := r.Peek(1)
	l.mu.Lock()
	l.all++
	if err == nil && first[0] == 0x16 {
		l.tls++
	}
	l.mu.Unlock()
	return &peekedConn{Conn: c, r: r}, nil
}

// peekedConn is a connection whose first bytes were read into r.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// A registry on any loopback address — 127.0.0.1, the rest of 127.0.0.0/8, localhost — is
// spoken to over plain HTTP only, as Docker does: no TLS handshake is ever tried.
func TestLoopbackRegistriesAreSpokenToOverPlainHTTP(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "127.0.0.2", "localhost"} {
		t.Run(host, func(t *testing.T) {
			ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
			if err != nil {
				t.Skipf("no listener on %s here: %v", host, err)
			}
			fb := &firstBytes{Listener: ln}
			srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0))), ErrorLog: log.New(io.Discard, "", 0)}
			go func() { _ = srv.Serve(fb) }()
			t.Cleanup(func() { _ = srv.Close() })
			port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)

			_, err = Resolve(context.Background(), Target{Registry: net.JoinHostPort(host, port) + "/team", Tag: "v1"})
			if !errors.Is(err, ErrNotPublished) {
				t.Fatalf("resolve: %v, want ErrNotPublished from the registry's answer", err)
			}
			fb.mu.Lock()
			defer fb.mu.Unlock()
			if fb.tls != 0 || fb.all == 0 {
				t.Fatalf("%d of %d connections opened with a TLS handshake, want none", fb.tls, fb.all)
			}
		})
	}
}
