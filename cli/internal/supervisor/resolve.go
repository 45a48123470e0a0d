package supervisor

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"syscall"
)

// Exit codes of a command that cannot be started, as a POSIX shell reports them.
const (
	// ExitNotExecutable: the command exists but cannot be executed (no execute permission, a
	// directory, a file the kernel cannot run).
	ExitNotExecutable = 126
	// ExitNotFound: no such command.
	ExitNotFound = 127
)

// StartError is a command that cannot be started; Code is ExitNotFound or ExitNotExecutable.
type StartError struct {
	Command string
	Code    int
	Err     error
}

// Error names the command and says what to do.
func (e *StartError) Error() string {
	what := "not found"
	if e.Code == ExitNotExecutable {
		what = "not executable (a directory, or a file without execute permission)"
	}
	return fmt.Sprintf("command %q is %s: %v; a name without '/' is looked up in PATH, a path is relative to the working directory", e.Command, what, e.Err)
}

// Unwrap returns the cause.
func (e *StartError) Unwrap() error { return e.Err }

// Resolve finds the executable of command the way exec.LookPath does: a name without '/' in
// PATH, a path relative to the working directory. It is checked before run contends, so that a
// command that can never start is a configuration error rather than an endless series of terms.
func Resolve(command string) (string, error) {
	path, err := exec.LookPath(command)
	if err == nil {
		return path, nil
	}
	code := ExitNotFound
	// With a '/' LookPath stats the file itself: a directory or a file without an execute
	// bit is found but not executable. In PATH, such files are skipped: not found.
	if strings.Contains(command, "/") && (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EISDIR)) {
		code = ExitNotExecutable
	}
	return "", &StartError{Command: command, Code: code, Err: err}
}
