package settings

import (
	"errors"
	"fmt"
)

// ErrEmpty is a file named by a _FILE variable that holds nothing but line ends.
var ErrEmpty = errors.New("settings: empty")

// The errors of the layers and of Merge. Each names the setting and the source of the value
// (the kernel keeps the provenance), and never quotes a value but one that is not of its
// kind: a Number or a Switch, never a Secret. Their Error methods give a default wording; a
// program may word them its own way from their fields.

// ValueError is a value that is not of its setting's kind, e.g. "soon" for a Number.
type ValueError struct {
	// Key is the setting's key.
	Key string
	// Kind is what the value should be: Number or Switch.
	Kind Kind
	// Text is the value as given.
	Text string
	// Source is where it came from.
	Source Source
}

// Want says what the value must be: "a whole number", "true or false".
func (e *ValueError) Want() string {
	if e.Kind == Switch {
		return "true or false"
	}
	return "a whole number"
}

// Error reads `invalid ttl_ms "soon" (from environment variable SWARM_LEASE_TTL_MS): want a
// whole number`.
func (e *ValueError) Error() string {
	return fmt.Sprintf("invalid %s %q (from %s): want %s", e.Key, e.Text, e.Source, e.Want())
}

// ConflictError is a setting given in one place (the environment, or one .env file) both by
// its variable and by its _FILE variable: which one is meant is unknown.
type ConflictError struct {
	// Key is the setting's key; Variable and FileVariable its two variables.
	Key, Variable, FileVariable string
	// Value and File are where each was set.
	Value, File Source
}

// Error reads "both SWARM_LEASE_TTL_MS and SWARM_LEASE_TTL_MS_FILE are set: keep one".
func (e *ConflictError) Error() string {
	return fmt.Sprintf("both %s and %s are set: keep one", e.Variable, e.FileVariable)
}

// ValueFileError is a _FILE variable naming a file that gives no value: one that ReadFile
// refuses (Err is then a *FileError), or one that is empty (Err is ErrEmpty). It says what
// the file is, never what it holds.
type ValueFileError struct {
	// Key is the setting's key; Variable is its _FILE variable.
	Key, Variable string
	// Source is where the _FILE variable was set.
	Source Source
	// Path is the file, as the variable gave it (a .env file's relative path joined to the
	// .env file's directory).
	Path string
	// Err is a *FileError or ErrEmpty.
	Err error
}

// Error reads "/run/secrets/ttl (named by SWARM_LEASE_TTL_MS_FILE) is a directory, not a
// regular file: use a regular file (a symbolic link to one is fine)".
func (e *ValueFileError) Error() string {
	var fe *FileError
	if errors.As(e.Err, &fe) {
		return fmt.Sprintf("%s (named by %s) %s: %s", e.Path, e.Variable, fe.Problem, fe.Fix)
	}
	return fmt.Sprintf("%s (named by %s) is empty: write the value of %s into it, or unset %s", e.Path, e.Variable, e.Key, e.Variable)
}

// Unwrap returns Err.
func (e *ValueFileError) Unwrap() error { return e.Err }

// SyntaxError is a line of a .env file that is not a NAME=VALUE assignment. It names the file
// and the line, never what the line holds: a .env file holds secrets, and a line that does not
// parse may be a value (a multi-line one, or one whose quote is not closed).
type SyntaxError struct {
	// Path is the .env file; Line the line (from 1).
	Path string
	Line int
	// Problem says what is wrong, e.g. "the quoted value that starts here is never closed".
	Problem string
}

// Error reads "/repo/.env line 3: the quoted value that starts here is never closed".
func (e *SyntaxError) Error() string { return fmt.Sprintf("%s line %d: %s", e.Path, e.Line, e.Problem) }
