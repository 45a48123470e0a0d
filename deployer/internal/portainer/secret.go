package portainer

import (
	"fmt"
	"log/slog"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/redact"
)

// Secret is a credential (an API key, a password, a JWT) that prints as "[REDACTED]" through
// fmt, encoding/json and log/slog, so that logging an Options or an error wrapping one cannot
// leak it. Convert it to string explicitly where the raw value must be sent.
type Secret string

// shown is what the Secret prints as: redact.Marker, or "" for an empty one, so that "not set"
// stays visible in diagnostics.
func (s Secret) shown() string {
	if s == "" {
		return ""
	}
	return redact.Marker
}

// String returns "[REDACTED]" (or "" when the secret is empty).
func (s Secret) String() string { return s.shown() }

// GoString makes %#v print the redacted form too.
func (s Secret) GoString() string { return fmt.Sprintf("%q", s.shown()) }

// Format prints the redacted form for every verb, including %x and %q, which would otherwise
// format the underlying string.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, s.GoString())
		return
	}
	fmt.Fprint(f, s.shown())
}

// MarshalJSON encodes the redacted form: a Secret is never serialised by value.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(fmt.Sprintf("%q", s.shown())), nil }

// LogValue makes log/slog record the redacted form.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.shown()) }

var (
	_ fmt.Stringer   = Secret("")
	_ fmt.GoStringer = Secret("")
	_ fmt.Formatter  = Secret("")
	_ slog.LogValuer = Secret("")
)
