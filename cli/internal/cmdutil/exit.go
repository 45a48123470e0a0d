package cmdutil

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/regbo/lfp-swarm-lease/cli/internal/config"
	"github.com/regbo/lfp-swarm-lease/cli/internal/runloop"
	"github.com/regbo/lfp-swarm-lease/cli/internal/supervisor"
	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
	"github.com/regbo/lfp-swarm-lease/lease"
)

// Exit codes of lfp-swarm-lease: ExitCodes describes each, and docs/configuration.md's table
// is generated from it.
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
	// ExitUnavailable: the store (the Docker engine, etcd), or the server the command talks
	// to, cannot be reached.
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

// ExitCode documents one exit code: the codes --json prints with it, and what it means.
type ExitCode struct {
	Code    int
	Names   []string
	Meaning string
}

// ExitCodes are every exit code of lfp-swarm-lease, in order, as docs/configuration.md lists
// them (a test keeps the page equal to this table).
var ExitCodes = []ExitCode{
	{ExitOK, nil, "done"},
	{ExitFailure, []string{"failure", "internal"}, "unexpected error"},
	{ExitUsage, []string{"usage", "invalid_configuration"}, "usage error or invalid setting: an unknown flag or command, a wrong argument, a setting out of range, a listen address in use, an input the elections server refuses (the message names the setting and where its value came from)"},
	{ExitNotHolder, []string{"not_holder"}, "`renew`/`release`: this identity/fence pair does not hold the lease"},
	{ExitCorrupt, []string{"corrupt_state"}, "the stored election cannot be parsed (nothing was overwritten)"},
	{ExitUnavailable, []string{"store_unreachable", "server_unreachable"}, "the store cannot be reached (Docker engine down, socket missing, no etcd member answering), or the server a command talks to does not answer (`watch`, `elections`)"},
	{ExitNotManager, []string{"not_swarm_manager"}, "the Docker engine is not a Swarm manager"},
	{ExitNoQuorum, []string{"no_quorum"}, "the Swarm or the etcd cluster has no leader (quorum lost)"},
	{ExitAmbiguous, []string{"outcome_unknown"}, "a write timed out, lost its Raft leader, or was refused as a conflict so late (≥ 500 ms, through a Swarm with several managers) that the refusal may be that of a second copy a manager re-sent, and its outcome could not be settled by reading back (also a `try-acquire` that then found another holder: its own write may have landed; `renew`/`release` in that case exit 3, since the term is over either way, and say that the earlier write may have been applied)"},
	{ExitConflict, []string{"too_many_conflicts"}, "every attempt met a conflicting write (`max_cas_retries` exhausted)"},
	{runloop.ExitLost, nil, "`run --once`: the term was lost before the command finished"},
	{ExitPermission, []string{"permission_denied"}, "the store refuses access: permission denied or a read-only file system (the message names the path), or etcd refused the user and password (the message names their settings)"},
	{ExitStoreFull, []string{"store_full"}, "the store has no space left for a write (the message names the path; nothing partial is written)"},
	{ExitHeld, []string{"held"}, "`try-acquire`: another contender holds the election"},
	{supervisor.ExitNotExecutable, []string{"command_not_executable"}, "`run`: the command is not executable (a directory, no execute permission)"},
	{supervisor.ExitNotFound, []string{"command_not_found"}, "`run`: the command is not found"},
}

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
	var unreachable *UnreachableError
	switch {
	case err == nil:
		return ExitOK, ""
	case errors.As(err, &exit):
		return exit.Code, codeName(exit.Code)
	case errors.As(err, &usage), errors.Is(err, config.ErrDiscovery), errors.Is(err, swarmlease.ErrInvalidInput):
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
	case errors.As(err, &unreachable): // a server's; a store's is ErrUnavailable
		return ExitUnavailable, "server_unreachable"
	}
	return ExitFailure, "internal"
}

// codeName is the --json code of an exit code a command chose: the first of its names.
func codeName(code int) string {
	for _, c := range ExitCodes {
		if c.Code == code && len(c.Names) > 0 {
			return c.Names[0]
		}
	}
	return "failure"
}

// Report prints a command's failure — on stderr as one "lfp-swarm-lease: …" message, restated
// by DescribeStoreFault where the store's path says more, and with --json also as one line of
// {"error", "code", "exit_code"} on stdout — and returns its exit code. Every command's failure
// goes through it, so that one failure has one voice and one code whichever command meets it.
func Report(io IOStreams, asJSON bool, err error) int {
	code, name := Classify(err)
	err = DescribeStoreFault(err, code)
	fmt.Fprintf(io.Err, "lfp-swarm-lease: %v\n", err)
	if asJSON {
		_ = json.NewEncoder(io.Out).Encode(ErrorJSON{Error: err.Error(), Code: name, Exit: code})
	}
	return code
}
