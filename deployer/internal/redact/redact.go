// Package redact takes secrets out of text that comes from elsewhere — the body of an error a
// server answered, a registry's message — before the deployer shows it. A server may echo a
// credential in another form than it was sent in, so every form is replaced: the secret as it
// is, JSON-escaped, URL-encoded, and base64-encoded at any alignment (which also covers the
// secret inside an encoded "user:secret" Basic credential).
//
// Text must be redacted before it is cut to a length: a cut through a secret would leave a
// first part that no longer matches any form.
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// Marker is what every form of a secret is replaced with.
const Marker = "[REDACTED]"

// minEncoded is the length from which an encoded form of a secret is replaced: a shorter
// fragment of base64 would match ordinary words. The secret as it is is always replaced.
const minEncoded = 6

// Text returns s with every form of every non-empty secret replaced by Marker.
func Text(s string, secrets ...string) string {
	var forms []string
	for _, secret := range secrets {
		forms = append(forms, Forms(secret)...)
	}
	// Longest first, so that a form is not broken up by the replacement of a shorter one
	// (the JSON-escaped secret contains pieces of the secret as it is).
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	for _, f := range slices.Compact(forms) {
		s = strings.ReplaceAll(s, f, Marker)
	}
	return s
}

// Forms returns the forms of secret that Text replaces: the secret itself, its JSON-escaped
// and URL-encoded forms, and the parts of its base64 encodings that do not depend on the bytes
// around it. An empty secret has none.
func Forms(secret string) []string {
	if secret == "" {
		return nil
	}
	forms := []string{secret}
	add := func(f string) {
		if len(f) >= minEncoded && !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	add(jsonEscaped(secret, true))
	add(jsonEscaped(secret, false))
	add(url.QueryEscape(secret))
	add(url.PathEscape(secret))
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for _, core := range base64Cores(enc, secret) {
			add(core)
		}
	}
	return forms
}

// jsonEscaped is secret as it appears inside a JSON string, with or without the HTML escapes
// (\u003c for <, …) that Go's encoder adds by default.
func jsonEscaped(secret string, escapeHTML bool) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(escapeHTML)
	if err := e.Encode(secret); err != nil {
		return secret
	}
	quoted := strings.TrimSuffix(b.String(), "\n")
	return quoted[1 : len(quoted)-1]
}

// base64Cores are the characters of the base64 encoding of secret that are the same wherever
// the secret starts in the encoded bytes. Base64 encodes 3 bytes as 4 characters, so the
// secret may start at 3 offsets within a group; at each, the characters that also encode a
// byte before or after the secret are left out.
func base64Cores(enc *base64.Encoding, secret string) []string {
	var cores []string
	for offset := range 3 {
		data := append(make([]byte, offset), secret...)
		s := enc.EncodeToString(data)
		// The first group's characters that hold bits of the bytes before the secret: none,
		// 2 (for 1 byte before) or 3 (for 2 bytes before).
		start := []int{0, 2, 3}[offset]
		end := len(s)
		if len(data)%3 != 0 {
			end-- // the last character also holds bits of the byte after the secret
		}
		if end > start {
			cores = append(cores, s[start:end])
		}
	}
	return cores
}

// Error returns err with its text redacted of secrets; errors.Is and errors.As still see err
// and every error it wraps. An error whose text holds no secret is returned as it is.
func Error(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	text := Text(err.Error(), secrets...)
	if text == err.Error() {
		return err
	}
	return &redactedError{err: err, text: text}
}

// redactedError is an error shown with its secrets redacted.
type redactedError struct {
	err  error
	text string
}

func (e *redactedError) Error() string { return e.text }

// Unwrap gives errors.Is and errors.As the original error.
func (e *redactedError) Unwrap() error { return e.err }
