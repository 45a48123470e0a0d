package settings

import "fmt"

// SourceKind is the layer a value came from.
type SourceKind int

// The layers, weakest first: a value of a later layer replaces one of an earlier layer.
const (
	// FromDefault is the setting's default, or a default the program derives (the hostname).
	FromDefault SourceKind = iota
	// FromLabel is a label of the current Swarm task's container.
	FromLabel
	// FromDotEnv is a line of a .env file, or a file its _FILE line names.
	FromDotEnv
	// FromEnv is a variable of the process environment, or a file its _FILE variable names.
	FromEnv
	// FromFlag is a flag the user gave.
	FromFlag
)

// Source says where a setting's value came from, for messages that name it.
type Source struct {
	// Kind is the layer.
	Kind SourceKind
	// Name is the flag (without dashes), the variable or the label that set the value; for a
	// value read from a file, the _FILE variable that named the file; for a default, what it
	// derives from ("the hostname"), or "".
	Name string
	// File and Line are, for FromDotEnv, the .env file and the line of Name in it.
	File string
	Line int
	// ValueFile is, for a value read from a file that a _FILE variable named, that file.
	ValueFile string
}

// String describes the source, e.g. "flag --ttl-ms", "environment variable SWARM_LEASE_TTL_MS",
// "file /run/secrets/ttl named by SWARM_LEASE_TTL_MS_FILE", "/repo/.env line 4
// (SWARM_LEASE_DEPLOY_REPLICAS)", "container label swarm-lease.ttl_ms", "default".
func (s Source) String() string {
	switch s.Kind {
	case FromFlag:
		return "flag --" + s.Name
	case FromEnv:
		if s.ValueFile != "" {
			return fmt.Sprintf("file %s named by %s", s.ValueFile, s.Name)
		}
		return "environment variable " + s.Name
	case FromDotEnv:
		if s.ValueFile != "" {
			return fmt.Sprintf("file %s named by %s", s.ValueFile, s.DotEnvLine())
		}
		return s.DotEnvLine()
	case FromLabel:
		return "container label " + s.Name
	}
	if s.Name != "" {
		return "default: " + s.Name
	}
	return "default"
}

// DotEnvLine describes a line of a .env file: "/repo/.env line 4 (SWARM_LEASE_DEPLOY_REPLICAS)".
func (s Source) DotEnvLine() string { return fmt.Sprintf("%s line %d (%s)", s.File, s.Line, s.Name) }
