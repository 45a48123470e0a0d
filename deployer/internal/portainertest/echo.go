package portainertest

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Echo makes the fake a Portainer behind a proxy (or a server build) that quotes every failed
// request in its answer — the worst a server can do with the credentials it was sent: each
// answer of 400 or more quotes the request. A real Portainer quotes nothing; without Echo the
// fake answers as it does.
type Echo struct {
	// Quote is what the answer quotes of a request: request is its credential headers
	// (X-API-Key, Authorization) and its body, a line each, as the proxy saw them. An Encoding
	// and a cut are the usual quotes.
	Quote func(request string) string
	// PlainText answers text/plain — Portainer's message, then the quote — as a proxy that
	// replaces the answer does; otherwise the quote is added to the JSON answer's details.
	PlainText bool
}

// Encoding is a way a server may quote text.
type Encoding struct {
	// Name names it.
	Name string
	// Encode encodes text. Unless Base64, each character separately, so that the quote of a
	// text's start is the start of the text's quote.
	Encode func(text string) string
	// Base64 tells the base64 encodings, which encode 3 bytes in 4 characters.
	Base64 bool
}

// Encodings are the ways servers quote what they were sent: JSON (Go's, without HTML escapes,
// ASCII-only with lower- and upper-case hex, \/ and HTML escaped, inside JSON), URL and form
// encoding (upper- and lower-case hex), HTML entities (named, decimal, hex) and base64 (both
// alphabets, padded and not).
var Encodings = []Encoding{
	{Name: "as it is", Encode: func(s string) string { return s }},
	{Name: `JSON, Go's (\u003c for <)`, Encode: func(s string) string { return jsonString(s, true) }},
	{Name: "JSON without HTML escapes", Encode: func(s string) string { return jsonString(s, false) }},
	{Name: `JSON, ASCII only (\u00e4)`, Encode: func(s string) string { return asciiJSON(s, "%04x", false) }},
	{Name: `JSON, ASCII, upper-case hex, \/ and HTML escaped (\u00E4, \u0026)`, Encode: func(s string) string { return asciiJSON(s, "%04X", true) }},
	{Name: "JSON inside JSON", Encode: func(s string) string { return jsonString(jsonString(s, true), true) }},
	{Name: "URL query (+ for a space)", Encode: url.QueryEscape},
	{Name: "URL path", Encode: url.PathEscape},
	{Name: "URL, lower-case hex", Encode: func(s string) string { return percent(s, "%%%02x") }},
	{Name: "HTML, named entities", Encode: namedEntities},
	{Name: "HTML, decimal entities", Encode: func(s string) string { return numericEntities(s, "&#%d;") }},
	{Name: "HTML, hex entities", Encode: func(s string) string { return numericEntities(s, "&#x%X;") }},
	{Name: "base64", Encode: func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }, Base64: true},
	{Name: "base64, URL alphabet, unpadded", Encode: func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }, Base64: true},
}

// Cut is quote cut after the encoding of text[:n], and an ellipsis: what a server that
// truncates its answer leaves. For base64, the last character that also holds bits of what
// follows is cut too.
func (e Encoding) Cut(text string, n int) string {
	whole, start := e.Encode(text), e.Encode(text[:n])
	common := 0
	for common < len(start) && start[common] == whole[common] {
		common++
	}
	return whole[:common] + "…"
}

// echo serves next, adding the quote of the request to every answer of 400 or more.
func (s *Server) echo(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPayload))
		r.Body = io.NopCloser(bytes.NewReader(body))
		var request strings.Builder
		for _, h := range []string{"X-API-Key", "Authorization"} {
			if v := r.Header.Get(h); v != "" {
				fmt.Fprintf(&request, "%s: %s\n", h, v)
			}
		}
		request.Write(body)
		answer := &bufferedAnswer{header: http.Header{}}
		next.ServeHTTP(answer, r)
		if answer.status < http.StatusBadRequest {
			answer.send(w)
			return
		}
		var portainer struct {
			Message string `json:"message"`
			Details string `json:"details"`
		}
		if json.Unmarshal(answer.body.Bytes(), &portainer) != nil {
			portainer.Message = strings.TrimSpace(answer.body.String()) // a plain-text answer
		}
		quote := s.quote.Quote(request.String())
		if s.quote.PlainText {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(answer.status)
			_, _ = io.WriteString(w, portainer.Message+": "+quote)
			return
		}
		writeError(w, answer.status, portainer.Message, strings.TrimSpace(portainer.Details+" "+quote))
	})
}

// bufferedAnswer holds an answer until the echo has seen its status.
type bufferedAnswer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (a *bufferedAnswer) Header() http.Header { return a.header }

func (a *bufferedAnswer) WriteHeader(status int) {
	a.status = cmp.Or(a.status, status)
}

func (a *bufferedAnswer) Write(b []byte) (int, error) {
	a.WriteHeader(http.StatusOK)
	return a.body.Write(b)
}

// send writes the answer as it was.
func (a *bufferedAnswer) send(w http.ResponseWriter) {
	for k, v := range a.header {
		w.Header()[k] = v
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body.Bytes())
}

// jsonString is s inside a JSON string as Go's encoding/json writes it, with or without its
// HTML escapes.
func jsonString(s string, escapeHTML bool) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(escapeHTML)
	_ = e.Encode(s)
	quoted := strings.TrimSuffix(b.String(), "\n")
	return quoted[1 : len(quoted)-1]
}

// asciiJSON is s inside a JSON string as an ASCII-only encoder writes it (Python's, .NET's):
// everything beyond ASCII as \uXXXX in hex (a surrogate pair beyond U+FFFF), and with
// htmlAndSlash also <, >, &, ' and + escaped and / as \/.
func asciiJSON(s, hex string, htmlAndSlash bool) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '/' && htmlAndSlash:
			b.WriteString(`\/`)
		case strings.ContainsRune("<>&'+", r) && htmlAndSlash, r >= 0x7f && r <= 0xffff:
			fmt.Fprintf(&b, `\u`+hex, r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(&b, `\u`+hex+`\u`+hex, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// percent URL-encodes every byte of s but ASCII letters and digits, in format.
func percent(s, format string) string {
	var b strings.Builder
	for i := range len(s) {
		if c := s[i]; isAlphanumeric(rune(c)) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, format, c)
		}
	}
	return b.String()
}

// namedEntities is s with HTML's named entity for every character that has a common one.
var namedEntities = strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;", `'`, "&apos;", "ä", "&auml;",
	"ö", "&ouml;", "/", "&sol;", "+", "&plus;", "=", "&equals;", `\`, "&bsol;", ".", "&period;", ":", "&colon;").Replace

// numericEntities is s with every character but ASCII letters and digits as an entity in
// format (&#%d; or &#x%X;).
func numericEntities(s, format string) string {
	var b strings.Builder
	for _, r := range s {
		if isAlphanumeric(r) {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, format, r)
		}
	}
	return b.String()
}

// isAlphanumeric reports whether r is an ASCII letter or digit.
func isAlphanumeric(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}
