package portainer_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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
