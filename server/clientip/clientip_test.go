package clientip

import (
	"net/http"
	"testing"
)

func TestClientKey(t *testing.T) {
	proxies, err := ParseTrustedProxies("10.0.0.0/8, ::ffff:192.168.0.0/112, 2001:db8:ffff::1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		peer, xff, want string
	}{
		{"203.0.113.7:4000", "", "203.0.113.7"},
		{"203.0.113.7:4000", "198.51.100.1", "203.0.113.7"}, // untrusted peer: its header is ignored
		{"[::ffff:203.0.113.7]:4000", "", "203.0.113.7"},
		{"[2001:db8::1]:4000", "", "2001:db8::/64"},
		{"[2001:db8::2]:4000", "", "2001:db8::/64"}, // the same /64: the same client
		{"[2001:db8:0:1::2]:4000", "", "2001:db8:0:1::/64"},
		{"10.1.2.3:80", "198.51.100.1", "198.51.100.1"},
		{"10.1.2.3:80", "198.51.100.1:5555", "198.51.100.1"},
		{"10.1.2.3:80", "[2001:db8::9]:443", "2001:db8::/64"},
		{"10.1.2.3:80", "[2001:db8::9]", "2001:db8::/64"},
		{"10.1.2.3:80", "203.0.113.66, 198.51.100.1, 10.9.9.9", "198.51.100.1"}, // rightmost untrusted
		{"10.1.2.3:80", "garbage, 198.51.100.1", "198.51.100.1"},
		{"10.1.2.3:80", "198.51.100.1, garbage", "10.1.2.3"}, // nothing beyond a garbled hop
		{"192.168.7.7:80", "198.51.100.1", "198.51.100.1"},   // mapped prefix trusts the unmapped peer
		{"[2001:db8:ffff::1]:80", "198.51.100.2", "198.51.100.2"},
	} {
		r := &http.Request{RemoteAddr: tc.peer, Header: http.Header{}}
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got := Key(r, proxies); got != tc.want {
			t.Errorf("peer %s, X-Forwarded-For %q: client %q, want %q", tc.peer, tc.xff, got, tc.want)
		}
	}
}
