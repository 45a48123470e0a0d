package portainer_test

import (
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainertest"
)

// Portainer down: the error says it is unreachable at the configured address and what to check.
func TestUnreachablePortainer(t *testing.T) {
	fake := portainertest.Start(t, fakeOptions(""))
	c := keyClient(t, fake)
	fake.Stop()
	_, err := c.Endpoint(testContext(t), "local")
	if !errors.Is(err, portainer.ErrUnreachable) || !strings.Contains(err.Error(), "unreachable at "+fake.URL()) ||
		!strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "check Options.URL") {
		t.Fatalf("Endpoint with Portainer down = %v", err)
	}
}

// statusHandler answers GET /api/system/status like Portainer.
func statusHandler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"Version":"2.23.0","InstanceID":"i"}`))
}

// An https Portainer with a certificate of an unknown CA: refused with a hint at CAFile; trusted
// with CAFile (or, for tests, InsecureSkipVerify).
func TestTLSVerification(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(statusHandler))
	t.Cleanup(srv.Close)
	ctx := testContext(t)
	_, err := newClient(t, portainer.Options{URL: srv.URL, APIKey: testKey}).Status(ctx)
	if !errors.Is(err, portainer.ErrUnreachable) || !strings.Contains(err.Error(), "check Options.CAFile") {
		t.Fatalf("unknown CA: %v, want an unreachable error pointing at CAFile", err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := newClient(t, portainer.Options{URL: srv.URL, APIKey: testKey, CAFile: ca}).Status(ctx); err != nil || st.Version != "2.23.0" {
		t.Fatalf("with CAFile: %+v, %v", st, err)
	}
	if _, err := newClient(t, portainer.Options{URL: srv.URL, APIKey: testKey, InsecureSkipVerify: true}).Status(ctx); err != nil {
		t.Fatalf("with InsecureSkipVerify: %v", err)
	}
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := portainer.New(portainer.Options{URL: srv.URL, APIKey: testKey, CAFile: notPEM}); err == nil || !strings.Contains(err.Error(), notPEM) {
		t.Fatalf("CAFile without PEM: %v, want an error naming the file", err)
	}
}

// Bodies are read within bounds: a huge answer is refused, a long non-JSON error is cut short,
// and the client follows no redirect (which would carry X-API-Key to another host).
func TestResponsesAreBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/endpoints/1":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"Name":"`))
			chunk := []byte(strings.Repeat("x", 1<<20))
			for range 40 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/api/endpoints/2":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("<html>" + strings.Repeat("proxy error ", 10000) + "</html>"))
		case "/api/endpoints/3":
			http.Redirect(w, r, "http://127.0.0.2:1/steal", http.StatusFound)
		}
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, portainer.Options{URL: srv.URL, APIKey: testKey})
	ctx := testContext(t)
	if _, err := c.Endpoint(ctx, "1"); err == nil || !strings.Contains(err.Error(), "larger than 32 MiB") {
		t.Errorf("40 MiB answer: %v, want it refused", err)
	}
	_, err := c.Endpoint(ctx, "2")
	var apiErr *portainer.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadGateway || len(apiErr.Message) > 600 || !strings.HasSuffix(apiErr.Message, "(truncated)") {
		t.Errorf("long HTML error: %v, want a 502 with a message cut short", err)
	}
	if _, err := c.Endpoint(ctx, "3"); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusFound {
		t.Errorf("redirect: %v, want the 302 as an error, not followed", err)
	}
}
