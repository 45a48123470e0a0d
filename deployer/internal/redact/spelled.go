package redact

import (
	"html"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// spelled finds where s spells target — each byte as it is or escaped (see unit) — whole, or
// its first minCut bytes or more where the echo ends (at cut, see cutAt). With asWord, a match
// must not have a word's byte right before it, nor, when whole, right after it.
func (t *text) spelled(target string, minCut int, asWord bool) []span {
	s := t.s
	m := matcher{text: t, target: target, minCut: minCut, asWord: asWord, at: make([][]int, len(target)+1)}
	var out []span
	for i := 0; i < len(s); i++ {
		if asWord && i > 0 && isWordByte(s[i-1]) {
			continue
		}
		if s[i] != target[0] && (strings.IndexByte(`\%&+`, s[i]) < 0 || !slices.ContainsFunc(t.unitsAt(i), func(u unit) bool { return u.decoded[0] == target[0] })) {
			continue // no unit that starts here spells target's first byte
		}
		if end, ok := m.from(i); ok {
			out = append(out, span{i, end})
		}
	}
	return out
}

// text is a text to redact, with what is worked out once for every target: where its closing
// part starts (see closing), and the units at each position, read when first needed.
type text struct {
	s     string
	cut   int
	units [][]unit
}

func newText(s string) *text { return &text{s: s, cut: closing(s), units: make([][]unit, len(s))} }

// unitsAt are the units at s[p].
func (t *text) unitsAt(p int) []unit {
	if t.units[p] == nil {
		t.units[p] = units(t.s, p)
	}
	return t.units[p]
}

// matcher spells one target in a text; its buffers serve every start.
type matcher struct {
	*text
	target string
	minCut int
	asWord bool
	// at[k] are the positions in s reached with target[:k] spelled.
	at [][]int
}

// from reports the end of the longest spelling of the target, or of its cut start, that
// begins at s[i].
func (m *matcher) from(i int) (int, bool) {
	s, target, at := m.s, m.target, m.at
	for k := range at {
		at[k] = at[k][:0]
	}
	at[0] = append(at[0], i)
	end, found := 0, false
	for k := range at {
		for _, p := range at[k] {
			switch {
			case k == len(target):
				if !m.asWord || p == len(s) || !isWordByte(s[p]) {
					end, found = max(end, p), true
				}
				continue
			case k >= m.minCut && cutAt(s, p, m.cut):
				end, found = max(end, p, m.cut), true
			}
			if p == len(s) {
				continue
			}
			for _, u := range m.unitsAt(p) {
				if next := k + len(u.decoded); next <= len(target) && target[k:next] == u.decoded && !slices.Contains(at[next], p+u.width) {
					at[next] = append(at[next], p+u.width)
				}
			}
		}
	}
	return end, found
}

// unit is one way to read s at a position: width bytes of s that stand for decoded.
type unit struct {
	decoded string
	width   int
}

// maxEntity bounds an HTML entity's length (the longest named one, &CounterClockwiseContourIntegral;, has 33 bytes).
const maxEntity = 33

// units are the ways s[p:] may start: the byte as it is, and the escape that starts there —
// JSON (\", \\, \/, \b, \f, \n, \r, \t, \uXXXX, a surrogate pair), URL (%XX) and form (+ for
// a space) encoding, an HTML entity.
func units(s string, p int) []unit {
	us := []unit{{s[p : p+1], 1}}
	rest := s[p:]
	switch s[p] {
	case '+':
		us = append(us, unit{" ", 1})
	case '%':
		if len(rest) >= 3 {
			if b, err := strconv.ParseUint(rest[1:3], 16, 8); err == nil {
				us = append(us, unit{string([]byte{byte(b)}), 3})
			}
		}
	case '\\':
		if u, ok := jsonEscape(rest); ok {
			us = append(us, u)
		}
	case '&':
		for q := 1; q < len(rest) && q < maxEntity; q++ {
			if rest[q] == ';' {
				if d := html.UnescapeString(rest[:q+1]); d != rest[:q+1] {
					us = append(us, unit{d, q + 1})
				}
				break
			}
		}
	}
	return us
}

// unescape reads s with every escape decoded (every unit's but a +, which may be a plus as
// well as a space), and returns it with what each of its bytes stands for in the text that
// from maps s to.
func unescape(s string, from []span) (string, []span) {
	var b strings.Builder
	var to []span
	for p := 0; p < len(s); {
		us := units(s, p)
		u := us[len(us)-1]
		if s[p] == '+' {
			u = us[0]
		}
		b.WriteString(u.decoded)
		for range len(u.decoded) {
			to = append(to, span{from[p].start, from[p+u.width-1].end})
		}
		p += u.width
	}
	return b.String(), to
}

// jsonShort are JSON's one-letter escapes.
var jsonShort = map[byte]string{'"': `"`, '\\': `\`, '/': "/", 'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t"}

// jsonEscape reads the JSON escape that starts rest (at its backslash).
func jsonEscape(rest string) (unit, bool) {
	if len(rest) < 2 {
		return unit{}, false
	}
	if d, ok := jsonShort[rest[1]]; ok {
		return unit{d, 2}, true
	}
	r, ok := hex4(rest)
	if !ok {
		return unit{}, false
	}
	if !utf16.IsSurrogate(r) {
		return unit{string(r), 6}, true
	}
	if low, ok := hex4(rest[min(6, len(rest)):]); ok {
		if pair := utf16.DecodeRune(r, low); pair != utf8.RuneError {
			return unit{string(pair), 12}, true
		}
	}
	return unit{}, false
}

// hex4 reads \uXXXX (hex digits of either case) at the start of s.
func hex4(s string) (rune, bool) {
	if len(s) < 6 || s[1] != 'u' {
		return 0, false
	}
	v, err := strconv.ParseUint(s[2:6], 16, 16)
	return rune(v), err == nil
}

// cutEscape is an escape cut short: what a cut through an escaped character leaves.
var cutEscape = regexp.MustCompile(`^(?:\\(?:u[0-9A-Fa-f]{0,3})?|%[0-9A-Fa-f]?|&#?[0-9A-Za-z]{0,31})$`)

// cutAt reports whether a secret spelled up to s[p] was cut there: p is in the closing part of
// the text, which starts at cut (see closing), or an escape cut short leads to it.
func cutAt(s string, p, cut int) bool {
	return p >= cut || cut-p <= maxEntity && cutEscape.MatchString(s[p:cut])
}

// truncationNotes are what a server may put after a text it cut.
var truncationNotes = []string{"…", "...", "(truncated)", "[truncated]"}

// closing returns where the closing part of s starts: the white space, closing quotes and
// brackets, full stops, ellipses and truncation notes that may follow a secret cut short at the
// end of an echo.
func closing(s string) int {
	for {
		trimmed := strings.TrimRight(s, " \t\r\n\"')]}>.")
		for _, note := range truncationNotes {
			trimmed = strings.TrimSuffix(trimmed, note)
		}
		if trimmed == s {
			return len(s)
		}
		s = trimmed
	}
}

// isWordByte reports whether b belongs to a word or a name: an ASCII letter or digit, - or _.
func isWordByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '-' || b == '_'
}
