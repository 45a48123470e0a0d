package redact

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"testing"
	"unicode/utf8"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainertest"
)

// The secrets of the table, one of each kind the deployer holds, with the characters encoders
// treat differently: quotes, <, &, /, +, =, a space, a backslash, letters beyond ASCII, a
// character beyond U+FFFF.
var secrets = []struct{ name, value string }{
	{"password", `S3cr"<t-pässwörd&x`},
	{"API key", "ptr_I8mBFW32zb67VoMRQERxMnKFYkWIA+4qj42p6xL1aNI="},
	{"registry token", "dckr_pat_Zz9/yY8 xX7+wW6'q"},
	{"JWT", "eyJhbGciOiJIUzI1NiJ9.eyJpZCI6MX0.c2lnbmF0dXJl"},
	{"secret Env value", `env 🔑 value/with\backslash`},
}

// head and trailer surround an echo: what a server writes before and after the secret.
const (
	head    = `login failed for {"Username":"admin","Password":"`
	trailer = `"}; try again`
	// cutMark is what a server that cuts an echo short appends.
	cutMark = "…"
)

// The table: every secret, as it is and as the deployer's JSON request carries it, in every
// character encoding of portainertest.Encodings, whole and cut after each of its characters
// from minCut bytes on (and inside the escape of the next one), is replaced by one Marker, and
// nothing else of the echo changes.
func TestEveryEncodingWholeOrCut(t *testing.T) {
	cases := 0
	for _, sec := range secrets {
		for form, value := range map[string]string{"as it is": sec.value, "in a JSON request": jsonString(sec.value, true)} {
			for _, enc := range portainertest.Encodings {
				if enc.Base64 {
					continue // TestEveryBase64EncodingWholeOrCut
				}
				full := enc.Encode(value)
				check := func(what, echo, want string) {
					t.Helper()
					cases++
					if got := Text(echo, sec.value); got != want {
						t.Errorf("%s %s, %s, %s:\n echo %q\n got  %q\n want %q", sec.name, form, enc.Name, what, echo, got, want)
					}
				}
				check("whole", head+full+trailer, head+Marker+trailer)
				for n := minCut; n < len(value); n++ {
					if !utf8.RuneStart(value[n]) {
						continue
					}
					shown := len(enc.Encode(value[:n]))
					next := len(enc.Encode(value[:n+1])) // the next character's encoding ends here
					for cut := shown; cut < next; cut++ {
						check(fmt.Sprintf("cut after %d bytes (+%d of an escape)", n, cut-shown), head+full[:cut]+cutMark, head+Marker+cutMark)
					}
				}
			}
		}
	}
	t.Logf("%d cases: %d secrets × 2 forms × %d encodings, whole and cut", cases, len(secrets), len(portainertest.Encodings)-2)
}

// The base64 table: every secret at each of the three alignments, in both alphabets, padded or
// not, inside a Basic credential and inside the deployer's JSON request: the characters that
// encode the secret alone are replaced, whole or cut after minBase64 of them or more.
func TestEveryBase64EncodingWholeOrCut(t *testing.T) {
	type payload struct {
		name, lead string
		secret     func(string) string
		trail      string
	}
	payloads := []payload{
		{"alone", "", func(s string) string { return s }, ""},
		{"after 1 byte", "a", func(s string) string { return s }, "z"},
		{"after 2 bytes", "ab", func(s string) string { return s }, "yz"},
		{"in a Basic credential", "pusher:", func(s string) string { return s }, ""},
		{"in a JSON request", `{"Username":"admin","Password":"`, func(s string) string { return jsonString(s, true) }, `"}`},
	}
	encodings := map[string]*base64.Encoding{"standard": base64.StdEncoding, "standard, unpadded": base64.RawStdEncoding,
		"URL": base64.URLEncoding, "URL, unpadded": base64.RawURLEncoding}
	cases := 0
	for _, sec := range secrets {
		for _, p := range payloads {
			inner := p.secret(sec.value)
			for encName, enc := range encodings {
				b64 := enc.EncodeToString([]byte(p.lead + inner + p.trail))
				// The characters of the secret alone: from the first after those holding bits of
				// the lead, to the last before one holding bits of what follows.
				first := []int{0, 2, 3}[len(p.lead)%3] + len(p.lead)/3*4
				last := (len(p.lead) + len(inner)) * 8 / 6
				check := func(what, echo, want string) {
					t.Helper()
					cases++
					if got := Text(echo, sec.value); got != want {
						t.Errorf("%s, base64 %s %s, %s:\n echo %q\n got  %q\n want %q", sec.name, encName, p.name, what, echo, got, want)
					}
				}
				check("whole", "echo "+b64+" end", "echo "+b64[:first]+Marker+b64[last:]+" end")
				for cut := first + minBase64; cut < last; cut++ {
					check(fmt.Sprintf("cut after %d characters", cut-first), "echo "+b64[:cut]+cutMark, "echo "+b64[:first]+Marker+cutMark)
				}
			}
		}
	}
	t.Logf("%d cases: %d secrets × %d payloads × %d alphabets, whole and cut", cases, len(secrets), len(payloads), len(encodings))
}

// A failed login answered by quoting the request with non-ASCII characters escaped, as many
// JSON encoders do, whole and cut inside an escape and after one.
func TestAnEscapedEchoOfAPassword(t *testing.T) {
	const password = `S3cr"<t-pässwörd&x`
	for echo, want := range map[string]string{
		`body {"Username": "admin", "Password": "S3cr\"<t-p\u00e4ssw\u00f6rd&x"}`: `body {"Username": "admin", "Password": "[REDACTED]"}`,
		`body {"Username": "admin", "Password": "S3cr\"<t-p\u00e4ssw\u00`:         `body {"Username": "admin", "Password": "[REDACTED]`,
		`body {"Username": "admin", "Password": "S3cr\"<t-p\u00e4...`:             `body {"Username": "admin", "Password": "[REDACTED]...`,
	} {
		if got := Text(echo, password); got != want {
			t.Errorf("%s\n → %s, want %s", echo, got, want)
		}
	}
}

// Redaction keeps the deployer's own words readable: a short secret is replaced only as a word
// (never letters out of words or names), a cut start only where the text ends — there even
// when the message's last word is the start of a secret: a word lost rather than a secret's
// start shown — and overlapping or adjacent matches — one secret inside another, two in a row
// — by a single Marker.
func TestMessagesStayReadable(t *testing.T) {
	for _, c := range []struct {
		text, want string
		secrets    []string
	}{
		{"failed to create service demo_web: Error response from daemon: rpc error", "failed to create service demo_web: Error response from daemon: rpc error", []string{"", "zz9", "no-such-secret-here"}},
		{"password admin for admin-panel, administrator, sysadmin", "password [REDACTED] for admin-panel, administrator, sysadmin", []string{"admin"}},
		{"the deployment failed: deny all", "the deployment failed: deny all", []string{"failed-hard-2026", "denyAll99"}}, // starts of secrets within the text
		{"the deployment failed", "the deployment [REDACTED]", []string{"failed-hard-2026"}},                              // a start of a secret ending it
		{"cannot push to the registry: den", "cannot push to the registry: den", []string{"denyAll99"}},                   // shorter than minCut
		{"token sk-live-0123456789sk-live-0123456789 sent", "token [REDACTED] sent", []string{"sk-live-0123456789"}},
		{"key ptr_abcdef123456 and ptr_abc", "key [REDACTED] and [REDACTED]", []string{"ptr_abcdef123456", "ptr_abc"}},
		{"jwt aaaa.bbbbbbbb.cccccccc!", "jwt [REDACTED]!", []string{"aaaa.bbbbbbbb.cccccccc", "bbbbbbbb"}},
		{"a stack file ends in the word athen", "a stack file ends in the word athen", []string{"thenZ"}}, // a short secret's start inside a word
	} {
		if got := Text(c.text, c.secrets...); got != c.want {
			t.Errorf("Text(%q, %q) = %q, want %q", c.text, c.secrets, got, c.want)
		}
	}
}

// A redacted error keeps its chain for errors.Is and errors.As.
func TestErrorKeepsTheChain(t *testing.T) {
	err := Error(fmt.Errorf("registry said %s: %w", "s3cret-token", fs.ErrPermission), "s3cret-token")
	if err.Error() != "registry said [REDACTED]: permission denied" || !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("Error = %q (Is ErrPermission: %v)", err, errors.Is(err, fs.ErrPermission))
	}
	plain := errors.New("nothing secret")
	if Error(plain, "s3cret-token") != plain || Error(nil, "x") != nil {
		t.Fatal("an error without a secret was wrapped")
	}
}
