//go:build linux

package main

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/settings/settingstest"
)

// The secrets of these tests: random enough that no piece of them is a word of a message.
const (
	apiKey        = "ptr_Zq8vX3kLw9TnB7"
	registryToken = "dckr_pat_7Hs2Qx9Lm4PvJ"
	urlPassword   = "hUnt3r2Gx7"
)

// noSecret fails t if out holds secret whole, cut (any 6 bytes of it in a row) or encoded
// (base64, hex, quoted).
func noSecret(t *testing.T, out, secret string) {
	t.Helper()
	for i := 0; i+6 <= len(secret); i++ {
		if strings.Contains(out, secret[i:i+6]) {
			t.Errorf("the output holds %q, a piece of a secret:\n%s", secret[i:i+6], out)
			return
		}
	}
	for _, enc := range []string{base64.StdEncoding.EncodeToString([]byte(secret)), base64.RawURLEncoding.EncodeToString([]byte(secret)), hex.EncodeToString([]byte(secret))} {
		if strings.Contains(out, enc[:12]) {
			t.Errorf("the output holds an encoding of a secret:\n%s", out)
		}
	}
}

// deployerIn runs `deployer ARGS…` in dir, a git repository of the test, with only vars of
// the deployer's settings.
func deployerIn(t *testing.T, dir string, vars []string, args ...string) settingstest.Result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, vars...)
	return settingstest.Run(t, cmd, settingDeadline)
}

// repository is a new git repository holding a .env with content.
func repository(t *testing.T, dotEnv string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(dotEnv), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// wantSetting checks an exit 2 whose message names each of parts and never a Go name of the
// Portainer client's options.
func wantSetting(t *testing.T, r settingstest.Result, parts ...string) {
	t.Helper()
	if r.Code != 2 {
		t.Errorf("exit %d, want 2\nstderr: %s", r.Code, r.Brief())
	}
	for _, p := range parts {
		if !strings.Contains(r.Stderr, p) {
			t.Errorf("stderr lacks %q:\n%s", p, r.Brief())
		}
	}
	if strings.Contains(r.Stderr, "Options.") {
		t.Errorf("stderr speaks of the client's Go options, not the settings:\n%s", r.Brief())
	}
}

// caFile writes a PEM certificate (a test server's) and returns its path.
func caFile(t *testing.T) string {
	t.Helper()
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The Portainer address and its TLS settings are settings: a wrong one exits 2 naming the
// setting as the user spelt it and where its value came from, as ftp:// always did, instead of
// exit 1 with the client's Go names (Options.URL, Options.CAFile).
func TestPortainerSettingsAreNamedAsTheUserSpellsThem(t *testing.T) {
	key := "SWARM_LEASE_DEPLOY_PORTAINER_API_KEY=" + apiKey
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		vars  []string
		args  []string
		parts []string
	}{
		{"ftp", []string{key, "SWARM_LEASE_DEPLOY_ENDPOINT=1"}, []string{"--portainer-url", "ftp://portainer.example"},
			[]string{"SWARM_LEASE_DEPLOY_PORTAINER_URL", "flag --portainer-url", "https://"}},
		{"the API path", []string{key, "SWARM_LEASE_DEPLOY_ENDPOINT=1"}, []string{"--portainer-url", "https://portainer.example:9443/api"},
			[]string{"SWARM_LEASE_DEPLOY_PORTAINER_URL", "flag --portainer-url", "/api"}},
		{"credentials in the URL", []string{key, "SWARM_LEASE_DEPLOY_ENDPOINT=1", "SWARM_LEASE_DEPLOY_PORTAINER_URL=https://admin:" + urlPassword + "@portainer.example:9443"}, nil,
			[]string{"SWARM_LEASE_DEPLOY_PORTAINER_URL", "variable SWARM_LEASE_DEPLOY_PORTAINER_URL", "user or password"}},
		{"a CA file with http", []string{key, "SWARM_LEASE_DEPLOY_ENDPOINT=1", "SWARM_LEASE_DEPLOY_PORTAINER_URL=http://127.0.0.1:9"}, []string{"--portainer-ca-file", caFile(t)},
			[]string{"SWARM_LEASE_DEPLOY_PORTAINER_CA_FILE", "flag --portainer-ca-file", "SWARM_LEASE_DEPLOY_PORTAINER_URL", "https://"}},
		{"a CA file and no verification", []string{key, "SWARM_LEASE_DEPLOY_ENDPOINT=1", "SWARM_LEASE_DEPLOY_PORTAINER_URL=https://127.0.0.1:9", "SWARM_LEASE_DEPLOY_PORTAINER_INSECURE_SKIP_VERIFY=true"}, []string{"--portainer-ca-file", caFile(t)},
			[]string{"SWARM_LEASE_DEPLOY_PORTAINER_CA_FILE", "SWARM_LEASE_DEPLOY_PORTAINER_INSECURE_SKIP_VERIFY"}},
		{"a CA file without a certificate", []string{key, "SWARM_LEASE_DEPLOY_ENDPOINT=1", "SWARM_LEASE_DEPLOY_PORTAINER_URL=https://127.0.0.1:9", "SWARM_LEASE_DEPLOY_PORTAINER_CA_FILE=" + notPEM}, nil,
			[]string{"SWARM_LEASE_DEPLOY_PORTAINER_CA_FILE", "variable SWARM_LEASE_DEPLOY_PORTAINER_CA_FILE", notPEM, "PEM"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := deployer(t, tc.vars, append([]string{"remove"}, tc.args...)...)
			wantSetting(t, r, tc.parts...)
			noSecret(t, r.Stdout+r.Stderr, apiKey)
			noSecret(t, r.Stdout+r.Stderr, urlPassword)
		})
	}
}

// A TLS handshake that fails names the setting to check, SWARM_LEASE_DEPLOY_PORTAINER_CA_FILE,
// not the client's Options.CAFile; it stays exit 1: the settings are well formed, the server
// is not the one they describe.
func TestTLSFailureNamesTheCAFileSetting(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	r := deployer(t, append(portainer(srv.URL), "SWARM_LEASE_DEPLOY_PORTAINER_API_KEY="+apiKey), "remove")
	if r.Code != 1 {
		t.Errorf("exit %d, want 1\nstderr: %s", r.Code, r.Brief())
	}
	for _, want := range []string{"TLS", "SWARM_LEASE_DEPLOY_PORTAINER_CA_FILE", "SWARM_LEASE_DEPLOY_PORTAINER_URL (from variable SWARM_LEASE_DEPLOY_PORTAINER_URL)"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Brief())
		}
	}
	if strings.Contains(r.Stderr, "Options.") {
		t.Errorf("stderr speaks of the client's Go options:\n%s", r.Brief())
	}
	noSecret(t, r.Stdout+r.Stderr, apiKey)
}

// A flag the command does not have is a usage error: exit 2, as every setting to fix, answered
// with the flag meant.
func TestUnknownFlagExits2(t *testing.T) {
	r := deployer(t, nil, "remove", "--portainer-ulr", "https://portainer.example")
	if r.Code != 2 || !strings.Contains(r.Stderr, "unknown flag --portainer-ulr: did you mean --portainer-url?") {
		t.Errorf("exit %d, want 2 naming the flag\nstderr: %s", r.Code, r.Brief())
	}
}

// A newcomer's first deploy reports every missing setting at once, not one per run.
func TestEveryMissingSettingIsReportedInOneRun(t *testing.T) {
	r := deployer(t, nil, "deploy", "--dry-run")
	wantSetting(t, r, "SWARM_LEASE_DEPLOY_PORTAINER_URL", "SWARM_LEASE_DEPLOY_PORTAINER_API_KEY", "SWARM_LEASE_DEPLOY_ENDPOINT",
		"SWARM_LEASE_DEPLOY_IMAGE_NAMESPACE", "--portainer-url", "--endpoint", "--image-namespace")
}

// A .env that starts with a UTF-8 byte order mark (as Windows editors save it) is read, the
// mark skipped: its first line is a setting like any other.
func TestDotEnvWithAByteOrderMarkIsRead(t *testing.T) {
	dir := repository(t, "\uFEFFSWARM_LEASE_DEPLOY_STACK_NAME=Not_Portainers\n"+
		"SWARM_LEASE_DEPLOY_PORTAINER_API_KEY="+apiKey+"\nSWARM_LEASE_DEPLOY_REGISTRY_TOKEN="+registryToken+"\n")
	r := deployerIn(t, dir, portainer("http://127.0.0.1:9"), "remove")
	wantSetting(t, r, "SWARM_LEASE_DEPLOY_STACK_NAME", filepath.Join(dir, ".env")+" line 1", "stack name")
	noSecret(t, r.Stdout+r.Stderr, apiKey)
	noSecret(t, r.Stdout+r.Stderr, registryToken)
}

// A .env that is not KEY=VALUE lines is a setting to fix (exit 2) named by its file and line,
// never by what it holds: an unterminated quote used to print the rest of the file, API key
// and registry token included.
func TestMalformedDotEnvNamesTheLineNeverAValue(t *testing.T) {
	for _, tc := range []struct{ name, content, line string }{
		{"unterminated quote", "SWARM_LEASE_DEPLOY_ENDPOINT=1\nSWARM_LEASE_DEPLOY_PORTAINER_API_KEY=\"" + apiKey + "\nSWARM_LEASE_DEPLOY_REGISTRY_TOKEN=" + registryToken + "\n", "line 2"},
		{"a value that is not a name", "# settings\n" + apiKey + " " + registryToken + "\n", "line 2"},
		{"text after a quote", "SWARM_LEASE_DEPLOY_REGISTRY_TOKEN='" + registryToken + "' " + apiKey + "\n", "line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repository(t, tc.content)
			r := deployerIn(t, dir, portainer("http://127.0.0.1:9"), "remove")
			wantSetting(t, r, filepath.Join(dir, ".env")+" "+tc.line)
			noSecret(t, r.Stdout+r.Stderr, apiKey)
			noSecret(t, r.Stdout+r.Stderr, registryToken)
		})
	}
}
