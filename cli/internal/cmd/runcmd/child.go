package runcmd

import (
	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"

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
		return &cmdutil.ExitError{Code: se.Code, Err: fmt.Errorf("run: %w", err)}
	}
	return err
}
