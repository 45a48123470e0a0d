package cmdutil

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
	// ExitNoQuorum: the store's cluster (Swarm, etcd) has no leader (quorum lost).
	ExitNoQuorum = 7
	// ExitAmbiguous: a write timed out or lost its Raft leader and reading back could not settle
	// its outcome. A renew or release refused after such a write exits ExitNotHolder instead:
	// its term is over either way.
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

// ExitError carries an exit code chosen by a command (for outcomes that are not errors of the
// program, such as "held by another contender").
type ExitError struct {
	// Code is the process's exit code.
	Code int
	// Err is what stderr says; ErrSilent when the command has reported the outcome itself.
	Err error
}

// Error is Err's message.
func (e *ExitError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *ExitError) Unwrap() error { return e.Err }

// UsageError marks bad arguments or settings (exit 2); its message names the setting.
type UsageError struct{ Err error }

// Usage marks err as a usage error.
func Usage(err error) error { return &UsageError{Err: err} }

// Error is Err's message.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *UsageError) Unwrap() error { return e.Err }

// ErrSilent, as an ExitError's Err, is an outcome the command already reported on stdout or
// stderr (e.g. "held by another contender"): nothing more is printed.
var ErrSilent = errors.New("reported")

// Classify maps an error to its exit code and a stable machine-readable code for --json.
func Classify(err error) (int, string) {
	var exit *ExitError
	var usage *UsageError
	var corrupt *lease.CorruptError
	switch {
	case err == nil:
		return ExitOK, ""
	case errors.As(err, &exit):
		return exit.Code, codeName(exit.Code)
	case errors.As(err, &usage), errors.Is(err, config.ErrDiscovery):
		return ExitUsage, "invalid_configuration"
	case errors.Is(err, lease.ErrNotHolder):
		return ExitNotHolder, "not_holder"
	case errors.As(err, &corrupt):
		return ExitCorrupt, "corrupt_state"
	// Before unreachable: a store may wrap both, and these need an operator, not a retry.
	case PermissionDenied(err):
		return ExitPermission, "permission_denied"
	case StoreFull(err):
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
