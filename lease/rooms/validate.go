package rooms

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/regbo/lfp-swarm-lease/timing"
)

// Limits of the wire contract (docs/elections-api.md).
const (
	// MinTTL and MaxTTL bound a lease's duration; it is a whole number of seconds (the timing
	// module's rule).
	MinTTL = timing.MinRoomTTL
	// MaxTTL is the longest accepted lease duration.
	MaxTTL = timing.MaxRoomTTL
	// DefaultTTL is the duration the wire contract applies when a request names none. The
	// engine never applies it by itself: an explicit zero is invalid.
	DefaultTTL = 30 * time.Second
	// MaxMetadata is the most Unicode characters of metadata a leader may carry.
	MaxMetadata = 1024
	// RoomIDBytes is the randomness of a generated room id: 192 bits, 32 base64url characters.
	RoomIDBytes = 24
	// TokenBytes is the randomness of a leader token: 256 bits, 43 base64url characters.
	TokenBytes = 32
)

var tokenEncoding = base64.RawURLEncoding.Strict()

// tokenLength is how many characters a token has.
const tokenLength = (TokenBytes*8 + 5) / 6

// roomIDBytes and candidateBytes are the bytes a room id and a candidate id may hold. A lookup
// table instead of a regular expression: every request checks a room id, twice for some, and
// regexp's matcher cost a few per cent of the server's CPU per request.
var (
	roomIDBytes    = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
	candidateBytes = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:@-")
)

// byteSet returns the set of the bytes of chars.
func byteSet(chars string) (set [256]bool) {
	for i := range len(chars) {
		set[chars[i]] = true
	}
	return set
}

// spelledWith reports whether s has least to most bytes, each one of set.
func spelledWith(s string, set *[256]bool, least, most int) bool {
	if len(s) < least || len(s) > most {
		return false
	}
	for i := range len(s) {
		if !set[s[i]] {
			return false
		}
	}
	return true
}

// ValidateRoomID checks a room id: 8 to 64 characters of [A-Za-z0-9_-]. Custom ids are allowed:
// a client may campaign in a room it never created.
func ValidateRoomID(id string) error {
	if !spelledWith(id, &roomIDBytes, 8, 64) {
		return fmt.Errorf("%w %q: use 8 to 64 letters, digits, '_' or '-'", ErrInvalidRoomID, truncate(id))
	}
	return nil
}

// ValidateCandidateID checks a candidate id: 1 to 64 bytes of [A-Za-z0-9._:@-]. Candidate ids
// are not unique keys: two processes may campaign under the same one.
func ValidateCandidateID(id string) error {
	if !spelledWith(id, &candidateBytes, 1, 64) {
		return fmt.Errorf("%w %q: use 1 to 64 letters, digits, '.', '_', ':', '@' or '-'", ErrInvalidCandidate, truncate(id))
	}
	return nil
}

// ValidateMetadata checks a leader's metadata: valid UTF-8 of at most MaxMetadata characters
// (Unicode code points, as the contract counts characters, not bytes). Empty means none.
func ValidateMetadata(m string) error {
	if !utf8.ValidString(m) {
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidMetadata)
	}
	if n := utf8.RuneCountInString(m); n > MaxMetadata {
		return fmt.Errorf("%w: %d characters, at most %d", ErrInvalidMetadata, n, MaxMetadata)
	}
	return nil
}

// ValidateTTL checks a lease duration: a whole number of seconds from MinTTL to MaxTTL.
func ValidateTTL(ttl time.Duration) error {
	if !timing.RoomTTLValid(ttl) {
		return fmt.Errorf("%w %v: use a whole number of seconds from %d to %d", ErrInvalidTTL, ttl,
			int(MinTTL/time.Second), int(MaxTTL/time.Second))
	}
	return nil
}

// NewRoomID returns a fresh room id: RoomIDBytes from crypto/rand, base64url without padding.
// Creating a room stores nothing; state appears on its first campaign.
//
// An id is drawn again when it starts with '-': a command line would read it as a flag
// ("elections status -4fQj..."). Redrawing 1 in 64 ids costs 0.02 bits of the 192.
func NewRoomID() string {
	for {
		if id := randomString(RoomIDBytes); id[0] != '-' {
			return id
		}
	}
}

// newToken returns a fresh leader token and its hash: the hash of the bytes the token spells.
func newToken() (string, tokenHash) {
	var b [TokenBytes]byte
	// crypto/rand.Read never fails (see randomString).
	_, _ = rand.Read(b[:])
	var spelled [tokenLength]byte // EncodeToString's buffer was an allocation of its own
	base64.RawURLEncoding.Encode(spelled[:], b[:])
	return string(spelled[:]), sha256.Sum256(b[:])
}

func randomString(n int) string {
	b := make([]byte, n)
	// crypto/rand.Read never fails (Go 1.24+: it crashes the program rather than return an
	// error, since no safe fallback exists).
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// tokenHash is SHA-256 of a token's 32 bytes: all that is ever stored of a token.
type tokenHash [sha256.Size]byte

// hashToken decodes a presented token strictly (one spelling per token: non-zero trailing bits
// are refused) and hashes it.
func hashToken(tok string) (tokenHash, error) {
	if len(tok) != tokenEncoding.EncodedLen(TokenBytes) {
		return tokenHash{}, fmt.Errorf("%w: want %d base64url characters", ErrInvalidToken, tokenEncoding.EncodedLen(TokenBytes))
	}
	// Decoded from and into arrays: DecodeString's result was one allocation per renewal.
	var spelled [tokenLength]byte
	var raw [TokenBytes]byte
	copy(spelled[:], tok)
	if n, err := tokenEncoding.Decode(raw[:], spelled[:]); err != nil || n != TokenBytes {
		return tokenHash{}, fmt.Errorf("%w: not base64url without padding", ErrInvalidToken)
	}
	return sha256.Sum256(raw[:]), nil
}

// equal compares two hashes in constant time, so response timing tells nothing about how much
// of a guessed token's hash matched.
func (h tokenHash) equal(o tokenHash) bool { return subtle.ConstantTimeCompare(h[:], o[:]) == 1 }

// truncate shortens a rejected value for an error message.
func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
