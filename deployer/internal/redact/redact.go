// Package redact takes secrets out of text that comes from elsewhere — the body of an error a
// server answered, a registry's message — before the deployer shows it. A server may echo a
// credential in another form than it was sent in, and may cut its echo short, so a secret is
// found:
//
//   - spelled with any mix of the escapes servers and proxies write: JSON's (\", \\, \/, \n,
//     \u00e4 and \u00E4, a surrogate pair beyond U+FFFF), URL and form encoding (%xx in either
//     case, + for a space) and HTML's entities (named, &#228;, &#xE4;) — each character as it
//     is or escaped, so every encoder's choice of what to escape is covered — and escaped so
//     up to maxLayers times more (a JSON request quoted in JSON inside a JSON answer);
//   - as it is, or as the deployer's JSON requests carry it (Go's escaping);
//   - in base64, standard or URL alphabet, padded or not, at each of the three alignments a
//     secret can have inside a longer encoded body (an encoded request, a "user:secret" Basic
//     credential, and that credential quoted in base64 once more), escaped as above too;
//   - whole, or cut: its first minCut bytes or more (minBase64 characters of its base64)
//     ending the text, followed by nothing but white space, closing quotes and brackets, full
//     stops, an ellipsis, a truncation note or an escape cut short — what a server that
//     truncates a long body leaves.
//
// Each found span is replaced by one Marker, and overlapping or touching spans by one. A
// secret shorter than minAnywhere bytes is replaced only where it stands as a word (no letter,
// digit, - or _ right before or after it), so that a short password cannot take letters out of
// the words and names of a message. A start of a secret that ends a text is replaced even when
// it is the message's last word: a word lost rather than a secret's start shown.
//
// Text must be redacted before it is cut to a length: a cut through a secret would leave a
// first part that this package could only find at the text's end.
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
)

// Marker is what every form of a secret is replaced with.
const Marker = "[REDACTED]"

// Lengths from which a piece of a secret is taken for the secret.
const (
	// minCut is the shortest start of a secret (in bytes, as it is or as the deployer's JSON
	// carries it) that is redacted where it ends a text. Fewer than 4 bytes would take the
	// last letters of ordinary messages for a password's first ones, and leave at most 3
	// bytes of a secret (less than a base64 quantum) where the echo was cut.
	minCut = 4
	// minBase64 is the shortest base64 piece of a secret replaced: 6 characters hold 4.5 bytes
	// of it, the base64 counterpart of minCut; a shorter piece would match ordinary words.
	minBase64 = 6
	// minAnywhere is the length from which a secret is replaced wherever it stands, not only
	// as a word.
	minAnywhere = 8
)

// maxLayers is how many times the text is read unescaped once more (see unescape), for an echo
// escaped over and over: a JSON request quoted in a JSON string inside a JSON answer.
const maxLayers = 3

// span is a part [start, end) of a text to replace.
type span struct{ start, end int }

// Text returns s with every form of every non-empty secret replaced by Marker.
func Text(s string, secrets ...string) string {
	var spans []span
	forms := formsOf(secrets)
	layer := s
	from := make([]span, len(s)) // from[j] is the part of s that byte j of layer stands for
	for j := range from {
		from[j] = span{j, j + 1}
	}
	for depth := 0; ; depth++ {
		for _, sp := range find(layer, forms) {
			spans = append(spans, span{from[sp.start].start, from[sp.end-1].end})
		}
		next, nextFrom := unescape(layer, from)
		if depth == maxLayers || next == layer {
			break
		}
		layer, from = next, nextFrom
	}
	return replace(s, spans)
}

// form is a form of a secret to look for: a cut one counts from its first minCut bytes on, and
// with asWord only as a word.
type form struct {
	text   string
	minCut int
	asWord bool
}

// formsOf are the forms of the secrets: each target (see targets), its base64 pieces, and the
// base64 pieces of the secret's own base64 pieces — a Basic credential quoted in base64.
func formsOf(secrets []string) []form {
	var out []form
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		for i, target := range targets(secret) {
			out = append(out, form{target, minCut, len(secret) < minAnywhere})
			for _, core := range base64Pieces(target) {
				out = append(out, form{core, minBase64, false})
				if i == 0 {
					for _, twice := range base64Pieces(core) {
						out = append(out, form{twice, minBase64, false})
					}
				}
			}
		}
	}
	return out
}

// find finds every form in s.
func find(s string, forms []form) []span {
	var spans []span
	t := newText(s)
	for _, f := range forms {
		spans = append(spans, t.spelled(f.text, f.minCut, f.asWord)...)
	}
	return spans
}

// targets are the byte strings a secret is looked for as: the secret itself, and the secret as
// a JSON string holds it in the deployer's requests (Go's encoding/json, which escapes <, > and
// & too) and without the HTML escapes.
func targets(secret string) []string {
	out := []string{secret}
	for _, escapeHTML := range []bool{true, false} {
		if inner := jsonString(secret, escapeHTML); !slices.Contains(out, inner) {
			out = append(out, inner)
		}
	}
	return out
}

// jsonString is s inside a JSON string as Go's encoding/json writes it, with or without its
// HTML escapes (\u003c for <, …).
func jsonString(s string, escapeHTML bool) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(escapeHTML)
	_ = e.Encode(s) // a string always encodes
	quoted := strings.TrimSuffix(b.String(), "\n")
	return quoted[1 : len(quoted)-1]
}

// base64Pieces are the base64 cores of secret (standard and URL alphabets) of minBase64
// characters or more.
func base64Pieces(secret string) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for _, core := range base64Cores(enc, secret) {
			if len(core) >= minBase64 && !slices.Contains(out, core) {
				out = append(out, core)
			}
		}
	}
	return out
}

// base64Cores are the characters of the base64 encoding of secret that are the same wherever
// the secret starts in the encoded bytes. Base64 encodes 3 bytes as 4 characters, so the
// secret may start at 3 offsets within a group; at each, the characters that also encode a
// byte before or after the secret are left out (and so is padding).
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

// replace replaces each span of s, overlapping or touching ones together, by one Marker.
func replace(s string, spans []span) string {
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	done := 0 // s[:done] is written or replaced
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && spans[i].start <= cur.end; i++ {
			cur.end = max(cur.end, spans[i].end)
		}
		b.WriteString(s[done:cur.start])
		b.WriteString(Marker)
		done = cur.end
	}
	b.WriteString(s[done:])
	return b.String()
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
