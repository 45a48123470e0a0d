package config_test

import (
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
)

// TestBaseURL: a URL without a scheme gets http://, a trailing slash goes; other schemes, no
// host and credentials are refused, and a refusal never quotes a password.
func TestBaseURL(t *testing.T) {
	for in, want := range map[string]string{"localhost:8080": "http://localhost:8080", "http://x:1/": "http://x:1",
		"https://x/elections/abcdefgh": "https://x/elections/abcdefgh", "10.0.0.1:80/elections/room-0001": "http://10.0.0.1:80/elections/room-0001"} {
		if got, err := config.BaseURL(in); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	// Refused, and never quoting a secret, not even cut: another scheme, no host, credentials,
	// a URL that does not parse (whose parser error quotes the value).
	for _, in := range []string{"ftp://x", "http://", "http://u:s3cr3t@x", "ftp://admin:s3cr3t@elect:8080",
		"https://admin:s3cr3t@", "http://admin:s3cr%zz3t@elect:8080", "http://[admin:s3cr3t@elect"} {
		_, err := config.BaseURL(in)
		if err == nil {
			t.Errorf("%q: accepted", in)
			continue
		}
		for _, part := range []string{"s3cr3t", "s3cr", "3t@", "%zz"} {
			if strings.Contains(err.Error(), part) {
				t.Errorf("%q: the error quotes %q: %v", in, part, err)
			}
		}
	}
}
