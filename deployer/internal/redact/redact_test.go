package redact

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"testing"
)

// Every form of a secret a server may echo is replaced, wherever it stands in the text.
func TestTextReplacesEveryForm(t *testing.T) {
	const secret = `dckr_pat_A+b/c="d"<e>&f`
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, echo := range []string{
		secret,
		`{"token":"dckr_pat_A+b/c=\"d\"\u003ce\u003e\u0026f"}`, // Go's JSON, HTML-escaped
		`{"token":"dckr_pat_A+b/c=\"d\"<e>&f"}`,
		url.QueryEscape(secret),
		url.PathEscape(secret),
		b64(secret), b64("u" + secret), b64("us" + secret), b64("user:" + secret),
		b64(secret + "!"), b64("a" + secret + "bc"),
		base64.URLEncoding.EncodeToString([]byte("pusher:" + secret)),
	} {
		got := Text("before "+echo+" after", secret)
		if !strings.Contains(got, Marker) {
			t.Errorf("%q: nothing redacted: %q", echo, got)
		}
		for _, part := range []string{"dckr_pat", b64(secret)[:12], url.QueryEscape(secret)[:12]} {
			if strings.Contains(got, part) {
				t.Errorf("%q: %q is left in %q", echo, part, got)
			}
		}
	}
}

// Ordinary text and empty secrets are left alone, and a short secret's encodings are not
// replaced (their fragments would match ordinary words).
func TestTextLeavesOtherTextAlone(t *testing.T) {
	text := "failed to create service demo_web: Error response from daemon: rpc error"
	if got := Text(text, "", "zz9", "no-such-secret-here"); got != text {
		t.Fatalf("Text changed %q to %q", text, got)
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
