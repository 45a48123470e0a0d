//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainerstub"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainertest"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/redact"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/settings/settingstest"
)

// The secrets the servers of these tests echo, with the characters encoders treat differently.
const (
	echoedPassword = `S3cr"<t-pässwörd&x`
	echoedKey      = "ptr_I8mBFW32zb67VoMRQERx+4qj42p6xL1aNI="
	echoedToken    = "dckr_pat_Zz9/yY8 xX7+wW6'q"
	// goodPassword is the password Portainer accepts, so that a call after the login quotes
	// the JWT.
	goodPassword = "g00d-Qx7Lm2Vb9Rt4w"
)

// echoPath is a path by which the deployer prints a server's answer that quotes a secret.
type echoPath struct {
	name string
	// says is what the deployer's own message must still say.
	says string
	// start starts the servers, whose failed answers carry quote (as plain text when plain);
	// it returns the deployer's settings but the secret's, the secret's _FILE variable, and
	// the command.
	start func(t *testing.T, quote func(string) string, plain bool) (vars []string, secretVar string, args []string)
	// secret is the secret of the run (in the secret's _FILE variable).
	secret string
	// untwinned keeps the secret for the second run: the secret that shows is one the server
	// made (a JWT), different at every login.
	untwinned bool
	// form is the secret as the request carries it (for the password: in the JSON body).
	form func(request string) string
}

// portainerEcho starts a fake Portainer that accepts admin/goodPassword and quotes every
// failed request.
func portainerEcho(t *testing.T, quote func(string) string, plain bool) string {
	fake := portainertest.Start(t, portainertest.Options{Users: map[string]string{"admin": goodPassword},
		Echo: &portainertest.Echo{Quote: quote, PlainText: plain}})
	return fake.URL()
}

// registryEcho starts a registry whose token service quotes every request for a token (its
// Basic credential, and the user and password it decoded) in its refusal: in the registry's
// JSON error, or as plain text.
func registryEcho(t *testing.T, quote func(string) string, plain bool) string {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v2/":
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="echo"`, srv.URL))
			w.WriteHeader(http.StatusUnauthorized)
		case "/token":
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			user, password, _ := r.BasicAuth()
			q := quote(fmt.Sprintf("Authorization: %s\nuser %s password %s\n%s", r.Header.Get("Authorization"), user, password, body))
			if plain {
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, q)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"code": "UNAUTHORIZED", "message": q}}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// lineAfter is the rest of the line of request after prefix.
func lineAfter(request, prefix string) string {
	_, rest, _ := strings.Cut(request, prefix)
	line, _, _ := strings.Cut(rest, "\n")
	return line
}

var echoPaths = []echoPath{
	{
		name: "API key, refused by Portainer", says: "401 Unauthorized", secret: echoedKey,
		start: func(t *testing.T, quote func(string) string, plain bool) ([]string, string, []string) {
			return portainer(portainerEcho(t, quote, plain)), "SWARM_LEASE_DEPLOY_PORTAINER_API_KEY_FILE", []string{"remove"}
		},
		form: func(request string) string { return lineAfter(request, "X-API-Key: ") },
	},
	{
		name: "password, a failed login", says: "log in as admin", secret: echoedPassword,
		start: func(t *testing.T, quote func(string) string, plain bool) ([]string, string, []string) {
			return append(portainer(portainerEcho(t, quote, plain)), "SWARM_LEASE_DEPLOY_PORTAINER_USERNAME=admin"),
				"SWARM_LEASE_DEPLOY_PORTAINER_PASSWORD_FILE", []string{"remove"}
		},
		form: func(request string) string {
			_, password, _ := strings.Cut(request, `"Password":"`)
			return strings.TrimSuffix(password, `"}`)
		},
	},
	{
		name: "JWT, a call after the login", says: "endpoint", secret: goodPassword, untwinned: true,
		start: func(t *testing.T, quote func(string) string, plain bool) ([]string, string, []string) {
			vars := []string{"SWARM_LEASE_DEPLOY_PORTAINER_URL=" + portainerEcho(t, quote, plain), "SWARM_LEASE_DEPLOY_ENDPOINT=7",
				"SWARM_LEASE_DEPLOY_PORTAINER_USERNAME=admin"}
			return vars, "SWARM_LEASE_DEPLOY_PORTAINER_PASSWORD_FILE", []string{"remove"}
		},
		form: func(request string) string { return lineAfter(request, "Authorization: Bearer ") },
	},
	{
		name: "registry token, refused by the registry's token service", says: "refused the credentials", secret: echoedToken,
		start: func(t *testing.T, quote func(string) string, plain bool) ([]string, string, []string) {
			routes := portainerstub.Swarm()
			routes["GET /api/system/status"] = portainerstub.Answer{Body: map[string]string{"Version": "2.23.0"}}
			routes["GET /api/stacks"] = portainerstub.Answer{Body: []any{}}
			routes["GET /api/endpoints/1/docker/services"] = portainerstub.Answer{Body: []any{}}
			vars := append(portainer(portainerstub.Server(t, routes)), "SWARM_LEASE_DEPLOY_PORTAINER_API_KEY=ptr_stub",
				"SWARM_LEASE_DEPLOY_REGISTRY="+registryEcho(t, quote, plain), "SWARM_LEASE_DEPLOY_IMAGE_NAMESPACE=demo",
				"SWARM_LEASE_DEPLOY_IMAGE_TAG=echo-1", "SWARM_LEASE_DEPLOY_REGISTRY_USERNAME=pusher")
			return vars, "SWARM_LEASE_DEPLOY_REGISTRY_TOKEN_FILE", []string{"deploy", "--dry-run", "--no-build-arm"}
		},
		form: func(request string) string { return lineAfter(request, "password ") },
	},
}

// twin is secret with every ASCII letter and digit but its first and last changed: a secret of
// the same shape, whose quote in any encoding differs from secret's only where the secret shows.
func twin(secret string) string {
	b := []byte(secret)
	for i := 1; i < len(b)-1; i++ {
		switch c := b[i]; {
		case c == 'z', c == 'Z', c == '9':
			b[i] = c - 1
		case 'a' <= c && c < 'z', 'A' <= c && c < 'Z', '0' <= c && c < '9':
			b[i] = c + 1
		}
	}
	return string(b)
}

// sameButMarkers reports whether a and b are the same once each is split at the redaction
// markers, but for one character on each side of a marker: the base64 character that encodes
// bits of the secret with bits of the byte before or after it.
func sameButMarkers(a, b string) bool {
	as, bs := strings.Split(a, redact.Marker), strings.Split(b, redact.Marker)
	if len(as) != len(bs) {
		return false
	}
	for i := range as {
		x, y := as[i], bs[i]
		if i > 0 && x != "" && y != "" {
			x, y = x[1:], y[1:]
		}
		if i < len(as)-1 && x != "" && y != "" {
			x, y = x[:len(x)-1], y[:len(y)-1]
		}
		if x != y {
			return false
		}
	}
	return true
}

// TestEchoedSecretsAreRedacted: servers that quote the request in their refusals — a Portainer
// (or a proxy before it) in its JSON answer's details or as plain text, a registry's token
// service in its JSON error or as plain text — in every encoding of portainertest.Encodings,
// whole or cut inside the secret, get no piece of the secret into what the deployer prints: the
// API key, the password, the JWT of a login, the registry token. Each case runs the deployer
// twice, with the secret and with its twin (the same shape, other letters and digits): the
// outputs are the same but for a base64 character beside a marker, so nothing of the secret
// shows, in any form; and the deployer's own message is still there.
func TestEchoedSecretsAreRedacted(t *testing.T) {
	leasetest.Long(t, "runs the deployer hundreds of times")
	// The deployer works in a git repository with the stack file.
	dir := t.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(dir, "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "deploy", "stack.yml"), []byte("services: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secretFile := filepath.Join(t.TempDir(), "secret")
	cases := 0
	for _, path := range echoPaths {
		for _, enc := range portainertest.Encodings {
			for _, cut := range []bool{false, true} {
				for _, plain := range []bool{false, true} {
					name := fmt.Sprintf("%s/%s/cut=%v/plain=%v", path.name, enc.Name, cut, plain)
					var mu sync.Mutex
					var quoted []string // the quoted forms of the secret, for the message of a failure
					quote := func(request string) string {
						form := path.form(request)
						i := strings.Index(request, form)
						mu.Lock()
						quoted = append(quoted, form)
						mu.Unlock()
						if !cut || form == "" || i < 0 {
							return enc.Encode(request)
						}
						n := i + len(form)/2
						for !utf8.RuneStart(request[n]) {
							n++
						}
						return enc.Cut(request, n)
					}
					vars, secretVar, args := path.start(t, quote, plain)
					second := twin(path.secret)
					if path.untwinned {
						second = path.secret
					}
					var outs [2]settingstest.Result
					for i, secret := range []string{path.secret, second} {
						if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
							t.Fatal(err)
						}
						outs[i] = deployerIn(t, dir, append(vars, secretVar+"="+secretFile), args...)
					}
					cases++
					r := outs[0]
					out := r.Stdout + r.Stderr
					switch {
					case r.Code != 1:
						t.Errorf("%s: exit %d, want 1\n%s", name, r.Code, out)
					case !strings.Contains(r.Stderr, redact.Marker) || !strings.Contains(r.Stderr, path.says):
						t.Errorf("%s: the error lacks %s or %q:\n%s", name, redact.Marker, path.says, out)
					case !sameButMarkers(out, outs[1].Stdout+outs[1].Stderr):
						t.Errorf("%s: a piece of the secret shows (the outputs of the secret and its twin differ):\n%s\n---\n%s\n(quoted %q)",
							name, out, outs[1].Stdout+outs[1].Stderr, quoted)
					}
					noSecret(t, out, path.secret)
				}
			}
		}
	}
	t.Logf("%d cases (%d deployer runs): %d paths × %d encodings × whole and cut × JSON and plain answers", cases, 2*cases, len(echoPaths), len(portainertest.Encodings))
}
