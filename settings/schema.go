package settings

import (
	"slices"
	"strings"
)

// FileSuffix turns a setting's variable into the variable that names a file holding its value:
// SWARM_LEASE_HOLDER_ID_FILE=/run/secrets/holder.
const FileSuffix = "_FILE"

// Kind is how a setting's text is read.
type Kind int

const (
	// Text is any text.
	Text Kind = iota
	// Secret is text that must never appear in output, logs, errors or process arguments: the
	// kernel never quotes it, and a program gives it no flag.
	Secret
	// Number is a whole number, read as an int64 (surrounding spaces allowed).
	Number
	// Switch is true or false; 1/0, yes/no and on/off are accepted too, in any case.
	Switch
)

// Setting is one setting of a program.
type Setting struct {
	// Key is the setting's name in lower case with underscores, e.g. "ttl_ms": the variable is
	// PREFIX_TTL_MS, the flag --ttl-ms, the container label lower(prefix).ttl_ms.
	Key string
	// Kind says how its text is read.
	Kind Kind
	// Default is its value when no layer sets it ("" for none).
	Default string
	// Help is the one-line description for its flag and the documentation.
	Help string
}

// Schema is a program's settings and how their names are made.
type Schema struct {
	// Prefix is the variables' prefix without its trailing '_', e.g. "SWARM_LEASE".
	Prefix string
	// Settings are the program's settings, in the order errors are reported in.
	Settings []Setting
	// Reserved are names under the prefix (after "PREFIX_") that are not settings but draw no
	// warning: what a program exports to its children, or variables of its test suites. A
	// trailing '*' matches every name that starts with what comes before it ("TEST_*").
	Reserved []string
	// EmptyIsUnset: a variable set to "" (in the environment or a .env file) counts as not
	// set, so that a copy of an example file with blank values sets nothing. Otherwise an
	// empty value is a value, except for a Number without a default, for which "" means that
	// it is not set.
	EmptyIsUnset bool
}

// Variable is the environment variable of key, e.g. SWARM_LEASE_TTL_MS.
func (s *Schema) Variable(key string) string { return s.Prefix + "_" + strings.ToUpper(key) }

// FileVariable is the variable that names a file holding key's value, e.g.
// SWARM_LEASE_TTL_MS_FILE.
func (s *Schema) FileVariable(key string) string { return s.Variable(key) + FileSuffix }

// Label is the container label of key, e.g. swarm-lease.ttl_ms.
func (s *Schema) Label(key string) string {
	return strings.ReplaceAll(strings.ToLower(s.Prefix), "_", "-") + "." + key
}

// FlagName is the flag of key without its dashes, e.g. ttl-ms.
func FlagName(key string) string { return strings.ReplaceAll(key, "_", "-") }

// Lookup returns the setting of key.
func (s *Schema) Lookup(key string) (Setting, bool) {
	i := slices.IndexFunc(s.Settings, func(st Setting) bool { return st.Key == key })
	if i < 0 {
		return Setting{}, false
	}
	return s.Settings[i], true
}

// reserved says whether name (a variable under the prefix, without it) is one of Reserved.
func (s *Schema) reserved(name string) bool {
	return slices.ContainsFunc(s.Reserved, func(r string) bool {
		p, ok := strings.CutSuffix(r, "*")
		return ok && strings.HasPrefix(name, p) || r == name
	})
}
