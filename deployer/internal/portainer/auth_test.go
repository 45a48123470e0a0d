package portainer_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainertest"
)

// Both modes authenticate; the password mode logs in once, sends no cookie back (the fake sets
// one on login and answers 403 to any request carrying it), and logs in again once after its JWT
// expires.
func TestBothAuthModesAndReauthentication(t *testing.T) {
	fake := portainertest.Start(t, fakeOptions(""))
	ctx := testContext(t)
	if ep, err := keyClient(t, fake).Endpoint(ctx, "1"); err != nil || ep.Name != "local" {
		t.Fatalf("API key: Endpoint(1) = %+v, %v", ep, err)
	}
	if fake.Logins() != 0 {
		t.Fatalf("the API key client logged in %d times", fake.Logins())
	}

	c := passwordClient(t, fake)
	for range 3 {
		if _, err := c.Endpoint(ctx, "local"); err != nil {
			t.Fatalf("password: Endpoint(local): %v", err)
		}
	}
	if n := fake.Logins(); n != 1 {
		t.Fatalf("three calls logged in %d times, want once", n)
	}
	fake.ExpireTokens()
	if _, err := c.Endpoint(ctx, "local"); err != nil {
		t.Fatalf("after the JWT expired: %v", err)
	}
	if n := fake.Logins(); n != 2 {
		t.Fatalf("after expiry: %d logins, want 2", n)
	}
}

// Failures map to the sentinels: an unknown key is 401, a wrong password 422 (ErrUnauthorized
// too), and a login flood 403 ErrForbidden.
func TestAuthFailures(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	o := fakeOptions("")
	o.Now = func() time.Time { return now }
	fake := portainertest.Start(t, o)
	ctx := testContext(t)

	_, err := newClient(t, portainer.Options{URL: fake.URL(), APIKey: "ptr_unknown"}).Endpoint(ctx, "1")
	var apiErr *portainer.APIError
	if !errors.Is(err, portainer.ErrUnauthorized) || !errors.As(err, &apiErr) || apiErr.StatusCode != 401 ||
		err.Error() != "portainer: endpoint 1: 401 Unauthorized: Invalid JWT token" {
		t.Fatalf("unknown key: %v, want 401 ErrUnauthorized", err)
	}

	bad := newClient(t, portainer.Options{URL: fake.URL(), Username: testUser, Password: "wrong-password"})
	_, err = bad.Endpoint(ctx, "1")
	if !errors.Is(err, portainer.ErrUnauthorized) || !errors.As(err, &apiErr) || apiErr.StatusCode != 422 ||
		!strings.Contains(err.Error(), "log in as deployer: 422 Unprocessable Entity: Invalid credentials") {
		t.Fatalf("wrong password: %v, want 422 ErrUnauthorized", err)
	}
	for range 10 { // logins 2 to 11
		_, err = bad.Endpoint(ctx, "1")
	}
	if !errors.Is(err, portainer.ErrForbidden) || !strings.Contains(err.Error(), "403 Forbidden: Access denied") {
		t.Fatalf("11th login in a second: %v, want 403 Access denied", err)
	}
	if _, err := passwordClient(t, fake).Endpoint(ctx, "1"); !errors.Is(err, portainer.ErrForbidden) {
		t.Fatalf("a right password from the banned address: %v, want ErrForbidden", err)
	}
}

// A JWT refused again right after a fresh login is an error, not a loop: the client logs in
// once more, then reports 401.
func TestReauthenticatesOnlyOnce(t *testing.T) {
	var logins, calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/auth" {
			logins.Add(1)
			_, _ = w.Write([]byte(`{"jwt":"jwt-always-refused"}`))
			return
		}
		calls.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"Invalid JWT token"}`))
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, portainer.Options{URL: srv.URL, Username: "u", Password: "p"})
	if _, err := c.Endpoint(testContext(t), "1"); !errors.Is(err, portainer.ErrUnauthorized) {
		t.Fatalf("Endpoint = %v, want ErrUnauthorized", err)
	}
	if logins.Load() != 2 || calls.Load() != 2 {
		t.Fatalf("%d logins and %d calls, want 2 and 2", logins.Load(), calls.Load())
	}
}

// cookieTransport sends a login cookie with every request, as a client with a cookie jar would
// after logging in.
type cookieTransport struct{ cookie string }

func (c cookieTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Cookie", "portainer_api_key="+c.cookie)
	return http.DefaultTransport.RoundTrip(r)
}

// The CSRF failure — of a write that carries the login cookie — is plain text: it becomes the
// APIError's message, and matches ErrForbidden. (The client's own transport never gets there:
// it keeps no cookie.)
func TestCSRFFailureIsAPlainTextForbidden(t *testing.T) {
	fake := portainertest.Start(t, fakeOptions(""))
	c := newClient(t, portainer.Options{URL: fake.URL(), APIKey: testKey, HTTPClient: &http.Client{Transport: cookieTransport{"any"}}})
	err := c.DeleteStack(testContext(t), 1, 1)
	var apiErr *portainer.APIError
	if !errors.Is(err, portainer.ErrForbidden) || !errors.As(err, &apiErr) || apiErr.Message != "Forbidden - CSRF token not found in request" {
		t.Fatalf("request with the login cookie = %v, want the CSRF 403", err)
	}
}
