package config

import "fmt"

// SourceKind is the layer a value came from.
type SourceKind int

// The layers, lowest precedence first.
const (
	FromDefault SourceKind = iota
	FromLabel
	FromEnv
	FromFlag
)

// Source says where a setting's value came from.
type Source struct {
	// Kind is the layer.
	Kind SourceKind
	// Name is the flag, variable, file or label that set it; for a default, what it derives
	// from ("the hostname"), or empty.
	Name string
	// Via is, for a value read from a file, the variable that named the file.
	Via string
}

// String describes the source for error messages, e.g. "environment variable SWARM_LEASE_TTL_MS".
func (s Source) String() string {
	switch s.Kind {
	case FromFlag:
		return "flag --" + s.Name
	case FromEnv:
		if s.Via != "" {
			return fmt.Sprintf("file %s named by %s", s.Name, s.Via)
		}
		return "environment variable " + s.Name
	case FromLabel:
		return "container label " + s.Name
	default:
		if s.Name != "" {
			return "default: " + s.Name
		}
		return "default"
	}
}
