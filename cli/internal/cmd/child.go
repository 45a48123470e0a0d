package cmd

import (
	"errors"
	"fmt"

	"github.com/regbo/lfp-swarm-lease/cli/internal/supervisor"
)

// checkCommand resolves run's command before run contends: not found exits 127, not executable
// 126, as a shell would, and no term is taken.
func checkCommand(command string) error {
	if _, err := supervisor.Resolve(command); err != nil {
		return commandError(err)
	}
	return nil
}

// commandError gives a command that cannot be started its exit code (126 or 127).
func commandError(err error) error {
	var se *supervisor.StartError
	if errors.As(err, &se) {
		return &exitError{code: se.Code, err: fmt.Errorf("run: %w", err)}
	}
	return err
}

// childOutcome is what the log says of a finished child: its own exit code, and how many of the
// processes it started had to be stopped after it (SIGTERM) or killed (SIGKILL).
func childOutcome(child *supervisor.Child) []any {
	r := child.Report()
	attrs := []any{"pid", r.PID, "exit_code", child.ExitCode(), "descendants_terminated", r.Terminated, "descendants_killed", r.Killed}
	if n := child.Leftovers(); n > 0 {
		attrs = append(attrs, "killed_after_guard_died", n)
	}
	return attrs
}
