package rooms

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
)

// FuzzRoomID checks ValidateRoomID against the contract's rule, spelled out: 8 to 64 bytes, each
// a letter, digit, '_' or '-'.
func FuzzRoomID(f *testing.F) {
	for _, s := range []string{"", "abcdefgh", "abcdefg", strings.Repeat("a", 64), strings.Repeat("a", 65), "abc$defgh",
		"abcdefgh\n", "ábcdefgh", NewRoomID(), "room-0_1", "../../etc", "abcdefgh\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		want := len(id) >= 8 && len(id) <= 64
		for i := 0; i < len(id) && want; i++ {
			c := id[i]
			want = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		}
		err := ValidateRoomID(id)
		if (err == nil) != want {
			t.Fatalf("ValidateRoomID(%q) = %v, want valid=%v", id, err, want)
		}
		if err != nil && len(id) <= 80 && !strings.Contains(err.Error(), strconv.Quote(id)) {
			t.Fatalf("the error does not name the id: %v", err)
		}
	})
}

// FuzzToken checks that a presented token is accepted exactly when it is the canonical
// base64url spelling of 32 bytes (one spelling per token), and that its hash is the hash of those
// bytes.
func FuzzToken(f *testing.F) {
	tok, _ := newToken()
	for _, s := range []string{"", tok, tok[:42], tok + "A", strings.Repeat("A", 43), strings.Repeat("A", 42) + "B",
		strings.Repeat("_", 43), strings.Repeat("A", 42) + "=", strings.Repeat("+", 43)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := hashToken(s)
		raw, decErr := base64.RawURLEncoding.DecodeString(s)
		canonical := decErr == nil && len(raw) == TokenBytes && base64.RawURLEncoding.EncodeToString(raw) == s
		if (err == nil) != canonical {
			t.Fatalf("hashToken(%q) = %v, want accepted=%v", s, err, canonical)
		}
		if err != nil {
			if len(s) >= 8 && strings.Contains(err.Error(), s) {
				t.Fatalf("the error echoes the presented token: %v", err)
			}
			return
		}
		want, _ := hashToken(base64.RawURLEncoding.EncodeToString(raw))
		if !h.equal(want) {
			t.Fatalf("hash of %q differs from the hash of its bytes", s)
		}
	})
}

// FuzzCandidateID checks ValidateCandidateID against the contract's rule, spelled out: 1 to 64
// bytes, each a letter, digit, '.', '_', ':', '@' or '-'.
func FuzzCandidateID(f *testing.F) {
	for _, s := range []string{"", "a", "worker-1.host:80@x", strings.Repeat("a", 64), strings.Repeat("a", 65), "a b",
		"a\n", "á", "a/b", "a\x00", "A_Z.0:9@-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		want := len(id) >= 1 && len(id) <= 64
		for i := 0; i < len(id) && want; i++ {
			c := id[i]
			want = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:@-", c) >= 0
		}
		if err := ValidateCandidateID(id); (err == nil) != want {
			t.Fatalf("ValidateCandidateID(%q) = %v, want valid=%v", id, err, want)
		}
	})
}
