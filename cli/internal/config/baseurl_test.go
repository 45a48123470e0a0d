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
	for _, in := range []string{"ftp://x", "http://", "http://u:s3cr3t@x"} {
		if _, err := config.BaseURL(in); err == nil || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%q: %v", in, err)
		}
	}
}
