package cmd

import (
	"errors"

	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/cli/internal/supervisor"
	"github.com/regbo/lfp-swarm-lease/lease"
)

// Exit codes of lfp-swarm-lease. The README's table lists the same.
const (
	// ExitOK: the command did what it was asked.
	ExitOK = 0
	// ExitFailure: an unexpected error.
	ExitFailure = 1
	// ExitUsage: bad arguments or an invalid setting (the message names it and its origin).
	ExitUsage = 2
	// ExitNotHolder: renew or release by an identity/fence pair that does not hold the lease.
	ExitNotHolder = 3
	// ExitCorrupt: the stored election cannot be parsed; nothing was written over it.
	ExitCorrupt = 4
	// ExitUnavailable: the store (the Docker engine) cannot be reached.
	ExitUnavailable = 5
	// ExitNotManager: the Docker engine is not a Swarm manager.
	ExitNotManager = 6
	// ExitNoQuorum: the Swarm has no leader (quorum lost).
	ExitNoQuorum = 7
	// ExitAmbiguous: a write timed out and its outcome could not be read back.
	ExitAmbiguous = 8
	// ExitConflict: every attempt of the operation met a conflicting write.
	ExitConflict = 9
	// ExitPermission: the store refuses this process access (a file store's directory that is
	// read-only or owned by another user).
	ExitPermission = 11
	// ExitStoreFull: the store has no space left for a write.
	ExitStoreFull = 12
	// ExitHeld: try-acquire found the election held by another contender (EX_TEMPFAIL).
	ExitHeld = 75
)

// exitError carries an exit code chosen by a command (for outcomes that are not errors of the
// program, such as "held by another contender").
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError marks bad arguments or settings.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// classification maps an error to its exit code and a stable machine-readable code for --json.
func classification(err error) (int, string) {
	var exit *exitError
	var usage *usageError
	var corrupt *lease.CorruptError
	switch {
	case err == nil:
		return ExitOK, ""
	case errors.As(err, &exit):
		return exit.code, codeName(exit.code)
	case errors.As(err, &usage), errors.Is(err, config.ErrDiscovery):
		return ExitUsage, "invalid_configuration"
	case errors.Is(err, lease.ErrNotHolder):
		return ExitNotHolder, "not_holder"
	case errors.As(err, &corrupt):
		return ExitCorrupt, "corrupt_state"
	// Before unreachable: a store may wrap both, and these need an operator, not a retry.
	case permissionDenied(err):
		return ExitPermission, "permission_denied"
	case storeFull(err):
		return ExitStoreFull, "store_full"
	// Ambiguous first: a timed-out write during lost quorum is both.
	case errors.Is(err, lease.ErrAmbiguous):
		return ExitAmbiguous, "outcome_unknown"
	case errors.Is(err, lease.ErrUnavailable):
		return ExitUnavailable, "store_unreachable"
	case errors.Is(err, lease.ErrNotManager):
		return ExitNotManager, "not_swarm_manager"
	case errors.Is(err, lease.ErrNoQuorum):
		return ExitNoQuorum, "no_quorum"
	case errors.Is(err, lease.ErrTooManyConflicts):
		return ExitConflict, "too_many_conflicts"
	}
	return ExitFailure, "internal"
}

func codeName(code int) string {
	switch code {
	case ExitHeld:
		return "held"
	case ExitNotHolder:
		return "not_holder"
	case supervisor.ExitNotExecutable:
		return "command_not_executable"
	case supervisor.ExitNotFound:
		return "command_not_found"
	}
	return "failure"
}
