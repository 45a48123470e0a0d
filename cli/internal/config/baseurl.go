package config

import (
	"fmt"
	"net/url"
	"strings"
)

// BaseURL is the one rule for a URL a command is given of a server it talks to — the server
// setting of run and elections, watch's URL: one without a scheme gets http://, and what can
// never work (another scheme, no host, credentials) is refused, so that it is a usage error
// (exit 2) instead of a minute of retries. A trailing slash is dropped.
func BaseURL(raw string) (string, error) {
	withScheme := raw
	if !strings.Contains(raw, "://") {
		withScheme = "http://" + raw
	}
	// The value is never quoted whole, nor is url.Parse's error, which quotes it: a URL may
	// hold a password. A URL that parses is quoted without its credentials.
	u, err := url.Parse(withScheme)
	if err != nil {
		return "", fmt.Errorf("the value is not a URL: want http://HOST:PORT or https://HOST:PORT")
	}
	if u.User != nil {
		return "", fmt.Errorf("%q has credentials, which do not belong in a URL: put authentication in a proxy", u.Redacted())
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http:// or https:// URL with a host: want http://HOST:PORT or https://HOST:PORT", u.Redacted())
	}
	return strings.TrimRight(u.String(), "/"), nil
}
