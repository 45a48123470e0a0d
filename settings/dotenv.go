package settings

import (
	"bytes"
	"strings"
)

// MaxDotEnvFile is the limit of a .env file: a few dozen settings take some KiB, and a path at
// a log or a disk image must fail, not fill memory.
const MaxDotEnvFile = 1 << 20

// Assignment is one NAME=VALUE of a .env file.
type Assignment struct {
	// Name is the variable; Value its value, unquoted, unescaped and expanded.
	Name, Value string
	// Line is the line Name is on (from 1).
	Line int
}

// ParseDotEnv reads data as the lines of a .env file; path names the file in errors. The
// format is the one of the dotenv libraries (godotenv, docker compose), read line by line so
// that every error is a *SyntaxError naming the file and the line and never the text there:
//
//   - a UTF-8 byte order mark at the start is skipped, and CRLF line ends are LF;
//   - empty lines and lines whose first non-blank character is '#' are comments;
//   - an assignment is [export ]NAME=VALUE (or NAME: VALUE), NAME of ASCII letters, digits,
//     '_' and '.', with blanks allowed around the '=';
//   - an unquoted VALUE runs to the end of the line, blanks around it trimmed; a '#' after a
//     blank starts a comment;
//   - a VALUE in single quotes is taken as it is; one in double quotes turns \n and \r into
//     line ends and \X into X; both may span lines, and only blanks or a comment may follow
//     the closing quote;
//   - in an unquoted or double-quoted VALUE, $NAME and ${NAME} (NAME of A-Z, 0-9 and '_')
//     are the value of an earlier line's NAME ("" if none) — \$ is a plain '$'.
//
// A later assignment of a name replaces an earlier one.
func ParseDotEnv(path string, data []byte) ([]Assignment, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	seen := map[string]string{}
	var out []Assignment
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " \t")
		if line == "" || line[0] == '#' {
			continue
		}
		at := i + 1
		fail := func(problem string) error { return &SyntaxError{Path: path, Line: at, Problem: problem} }
		name, rest, problem := splitAssignment(line)
		if problem != "" {
			return nil, fail(problem)
		}
		var value string
		if rest != "" && (rest[0] == '"' || rest[0] == '\'') {
			quote := rest[0]
			var raw strings.Builder
			body := rest[1:]
			for {
				end := closingQuote(body, quote)
				if end >= 0 {
					raw.WriteString(body[:end])
					if after := strings.TrimLeft(body[end+1:], " \t\r"); after != "" && after[0] != '#' {
						return nil, &SyntaxError{Path: path, Line: i + 1,
							Problem: "text follows the closing quote"}
					}
					break
				}
				raw.WriteString(body)
				raw.WriteByte('\n')
				if i++; i == len(lines) {
					return nil, fail("the quoted value that starts here is never closed")
				}
				body = lines[i]
			}
			value = raw.String()
			if quote == '"' {
				value = substitute(value, seen, true)
			}
		} else {
			if c := commentStart(rest); c >= 0 {
				rest = rest[:c]
			}
			value = substitute(strings.Trim(rest, " \t\r"), seen, false)
		}
		seen[name] = value
		out = append(out, Assignment{Name: name, Value: value, Line: at})
	}
	return out, nil
}

// splitAssignment splits "[export ]NAME=rest" into NAME and rest (blanks after the '='
// dropped), or says what is wrong with it.
func splitAssignment(line string) (name, rest, problem string) {
	if after, ok := strings.CutPrefix(line, "export"); ok && after != "" && (after[0] == ' ' || after[0] == '\t') {
		line = strings.TrimLeft(after, " \t")
	}
	n := 0
	for n < len(line) && nameByte(line[n]) {
		n++
	}
	name, rest = line[:n], strings.TrimLeft(line[n:], " \t")
	switch {
	case n == 0:
		return "", "", "not NAME=VALUE: no name (a name is made of letters, digits, '_' and '.')"
	case rest == "" || rest[0] != '=' && rest[0] != ':':
		return "", "", "not NAME=VALUE: no '=' after the name (a name is made of letters, digits, '_' and '.')"
	}
	return name, strings.TrimLeft(rest[1:], " \t"), ""
}

func nameByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

// closingQuote is the index in s of the first quote not escaped by a backslash, or -1.
func closingQuote(s string, quote byte) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case quote:
			return i
		}
	}
	return -1
}

// commentStart is the index of a '#' after a blank in an unquoted value, or -1.
func commentStart(s string) int {
	for i := 1; i < len(s); i++ {
		if s[i] == '#' && (s[i-1] == ' ' || s[i-1] == '\t') {
			return i
		}
	}
	return -1
}

// substitute expands $NAME and ${NAME} from seen, and with escapes (a double-quoted value)
// turns \n and \r into line ends and any other \X into X; without, only \$ loses its
// backslash.
func substitute(s string, seen map[string]string, escapes bool) string {
	if !strings.ContainsAny(s, `$\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && (escapes || s[i+1] == '$'):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(s[i])
			}
		case c == '$':
			j, braced := i+1, i+1 < len(s) && s[i+1] == '{'
			if braced {
				j++
			}
			k := j
			for k < len(s) && (s[k] >= 'A' && s[k] <= 'Z' || s[k] >= '0' && s[k] <= '9' || s[k] == '_') {
				k++
			}
			if k == j {
				b.WriteByte(c) // a '$' that starts no name is itself
				continue
			}
			if braced && k < len(s) && s[k] == '}' {
				k++
			}
			b.WriteString(seen[strings.TrimSuffix(s[j:k], "}")])
			i = k - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
