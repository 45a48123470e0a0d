package portainer_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainertest"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// The secrets of the redaction tests: each must appear in no error and no log line.
const (
	echoedKey      = "ptr_echoed-api-key"
	echoedPassword = "echoed-password"
	echoedJWT      = "eyJechoed.jwt.token"
	echoedEnv      = "echoed-env-value"
	// echoedQuoted is a secret that JSON escapes: the echo holds it as echoed-\"quoted\"-<…>.
	echoedQuoted = `echoed-"quoted"-<value>`
)

// echoServer answers every call with an error that quotes the request's headers and body (the
// worst a proxy or a broken server could do), and logs in with echoedJWT.
func echoServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/api/auth" && bytes.Contains(body, []byte(echoedPassword)) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jwt":"` + echoedJWT + `"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{
			"message": fmt.Sprintf("headers %v", r.Header),
			"details": "body " + string(body),
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// assertNoSecret fails when text holds any of the secrets.
func assertNoSecret(t *testing.T, what, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("%s holds the secret %q: %s", what, s, text)
		}
	}
}

// Errors quote what Portainer answered, but never the API key, the password, the JWT or an Env
// value marked secret — even from a server that echoes them — and the debug log holds none.
func TestErrorsAndLogsHoldNoSecret(t *testing.T) {
	srv := echoServer(t)
	var logged bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	secrets := []string{echoedKey, echoedPassword, echoedJWT, echoedEnv, echoedQuoted, "quoted"}
	ctx := testContext(t)
	request := portainer.CreateStackRequest{Name: "demo", SwarmID: "sw", StackFileContent: "services: {}",
		Env: []portainer.EnvVar{{Name: "TOKEN", Value: echoedEnv, Secret: true}, {Name: "QUOTED", Value: echoedQuoted, Secret: true}, {Name: "PLAIN", Value: "shown"}}}

	for _, o := range []portainer.Options{
		{URL: srv.URL, APIKey: echoedKey, Logger: log},
		{URL: srv.URL, Username: "u", Password: echoedPassword, Logger: log},
	} {
		c := newClient(t, o)
		_, err := c.CreateSwarmStack(ctx, 1, request)
		if err == nil || !strings.Contains(err.Error(), "[REDACTED]") || !strings.Contains(err.Error(), "shown") {
			t.Fatalf("create against the echo server = %v, want the echo with the secrets redacted", err)
		}
		assertNoSecret(t, "create error", err.Error(), secrets...)
		_, err = c.UpdateStack(ctx, 1, 1, portainer.UpdateStackRequest{StackFileContent: "x", Env: request.Env})
		assertNoSecret(t, "update error", fmt.Sprint(err), secrets...)
		log.Info("the client's options", "options", o, "request", request)
	}
	// A login the server refuses, echoing the password.
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = w.Write(body)
	}))
	t.Cleanup(failing.Close)
	_, err := newClient(t, portainer.Options{URL: failing.URL, Username: "u", Password: echoedPassword, Logger: log}).Endpoint(ctx, "1")
	if err == nil {
		t.Fatal("a refused login succeeded")
	}
	assertNoSecret(t, "login error", err.Error(), secrets...)
	if !strings.Contains(logged.String(), `"status":400`) {
		t.Fatalf("the debug log holds no request line: %s", logged.String())
	}
	assertNoSecret(t, "the log", logged.String(), secrets...)
}

// The docker CLI's stderr of a failed deploy comes back as the message, with a secret Env value
// that the stack file put into it redacted.
func TestDeployErrorRedactsSecretEnv(t *testing.T) {
	host := leasetest.SwarmHost(t)
	fake := portainertest.Start(t, fakeOptions(host))
	c := keyClient(t, fake)
	ctx := testContext(t)
	swarm, err := c.SwarmID(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	file := "version: \"3.8\"\nservices:\n  web:\n    image: 127.0.0.1:1/none:1\n    networks: [outside]\nnetworks:\n  outside:\n    external: true\n    name: \"net-${NETWORK_SECRET}\"\n"
	_, err = c.CreateSwarmStack(ctx, 1, portainer.CreateStackRequest{Name: uniqueStack(t, "ptc-redact"), SwarmID: swarm, StackFileContent: file,
		Env: []portainer.EnvVar{{Name: "NETWORK_SECRET", Value: echoedEnv, Secret: true}}})
	var apiErr *portainer.APIError
	if !errorsAs(err, &apiErr) || apiErr.StatusCode != http.StatusInternalServerError || !strings.Contains(apiErr.Message, "net-[REDACTED]") {
		t.Fatalf("create with a missing external network = %v, want 500 quoting the CLI with the value redacted", err)
	}
	assertNoSecret(t, "deploy error", err.Error(), echoedEnv)
	if len(fake.Stacks()) != 0 {
		t.Fatalf("a failed deploy left a record: %+v", fake.Stacks())
	}
}

// A plain-text error body is cut to a bounded size for the message; a secret the cut falls
// into is redacted all the same, since the text is redacted before it is cut.
func TestErrorTextIsRedactedBeforeItIsCut(t *testing.T) {
	const key = "ptr_I8mBFW32zb67VoMRQERxMnKFYkWIA+4qj42p6xL1aNI="
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		// The key straddles the cut: its first half lies before it.
		_, _ = w.Write([]byte(strings.Repeat("x", 500) + r.Header.Get("X-API-Key") + " and more"))
	}))
	t.Cleanup(srv.Close)
	_, err := newClient(t, portainer.Options{URL: srv.URL, APIKey: key}).Endpoint(testContext(t), "1")
	if err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("error %v, want the body cut", err)
	}
	assertNoSecret(t, "the cut error", err.Error(), key[:8])
}

// encodings are the forms in which a server may echo a secret: base64 (at every alignment,
// and as the password of a Basic credential), URL-encoded and JSON-escaped.
func encodings(secret string) []string {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	quoted, _ := json.Marshal(secret)
	return []string{
		b64(secret), b64("x" + secret), b64("xy" + secret), b64("admin:" + secret),
		base64.URLEncoding.EncodeToString([]byte(secret)), base64.RawStdEncoding.EncodeToString([]byte(secret)),
		url.QueryEscape(secret), url.PathEscape(secret), string(quoted[1 : len(quoted)-1]),
	}
}

// A server that echoes the credentials encoded — base64, URL-encoded, JSON-escaped — gets
// none of them into an error: every form of every secret is redacted.
func TestEncodedEchoesOfSecretsAreRedacted(t *testing.T) {
	const (
		key      = "ptr_I8mBFW32zb67VoMRQERxMnKFYkWIA+4qj42p6xL1aNI="
		password = `pass word/with+"odd"&chars=`
		envValue = "env secret/with+plus=and&amp"
	)
	var jwt string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var seen []string
		if r.URL.Path == "/api/auth" {
			var login struct{ Password string }
			_ = json.NewDecoder(r.Body).Decode(&login)
			if login.Password == password {
				jwt = "eyJhbGciOiJIUzI1NiJ9.eyJpZCI6MX0.c2lnbmF0dXJl"
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jwt":"` + jwt + `"}`))
				return
			}
		} else {
			var body struct{ Env []struct{ Value string } }
			_ = json.NewDecoder(r.Body).Decode(&body)
			for _, v := range body.Env {
				seen = append(seen, v.Value)
			}
		}
		seen = append(seen, r.Header.Get("X-API-Key"), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		var echo []string
		for _, s := range seen {
			if s != "" {
				echo = append(echo, encodings(s)...)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"message": "echo " + strings.Join(echo, " "), "details": "again " + strings.Join(echo, ",")})
	}))
	t.Cleanup(srv.Close)
	request := portainer.CreateStackRequest{Name: "demo", SwarmID: "sw", StackFileContent: "services: {}",
		Env: []portainer.EnvVar{{Name: "TOKEN", Value: envValue, Secret: true}}}
	for _, o := range []portainer.Options{{URL: srv.URL, APIKey: key}, {URL: srv.URL, Username: "admin", Password: password}} {
		_, err := newClient(t, o).CreateSwarmStack(testContext(t), 1, request)
		if err == nil || !strings.Contains(err.Error(), "echo [REDACTED]") {
			t.Fatalf("create against the echo server = %v, want the echo redacted", err)
		}
		for _, secret := range []string{key, password, envValue, jwt} {
			if secret == "" {
				continue // the JWT, before the password client logged in
			}
			assertNoSecret(t, "the error", err.Error(), append(encodings(secret), secret)...)
		}
	}
}
