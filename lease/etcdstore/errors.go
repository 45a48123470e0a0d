package etcdstore

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// classify wraps an etcd client error with the lease sentinel the engines act on. A write
// that may have applied (unsettled, as send reports it: a copy timed out, cut off with its
// connection, or in flight while the leader changed may still commit — every error but one
// that proves the copy was never proposed) wraps lease.ErrAmbiguous, with ErrNoQuorum or
// ErrUnavailable beside it to say why. A read that failed on every member it went to wraps
// ErrNoQuorum or ErrUnavailable.
func classify(op, key string, err error, unsettled bool) error {
	if err == nil {
		return nil
	}
	kind := kindOf(err)
	switch {
	case kind == nil:
		return fmt.Errorf("etcd store: %s %q: %w", op, key, err)
	case unsettled:
		return fmt.Errorf("etcd store: %s %q: %w (%w): %w", op, key, lease.ErrAmbiguous, kind, err)
	}
	return fmt.Errorf("etcd store: %s %q: %w: %w", op, key, kind, err)
}

// refused is the error of a conditional write that etcd refused: refusal — or, when another
// copy of the write may have applied or may yet apply (unsettled), ErrAmbiguous, since the
// refusal may be that copy's own doing.
func refused(op, key string, unsettled bool, refusal error) error {
	if unsettled {
		return fmt.Errorf("etcd store: %s %q: %w: refused while another copy of the write may have applied", op, key, lease.ErrAmbiguous)
	}
	return refusal
}

// kindOf maps an error to a lease sentinel, nil for errors that are none of them (a request
// the cluster refuses as malformed: a bug, not a state of the cluster).
func kindOf(err error) error {
	e := rpctypes.Error(err)
	switch {
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.Is(e, rpctypes.ErrNoLeader), errors.Is(e, rpctypes.ErrLeaderChanged),
		errors.Is(e, rpctypes.ErrTimeoutDueToLeaderFail), errors.Is(e, rpctypes.ErrNotLeader):
		return lease.ErrNoQuorum
	case errors.Is(e, rpctypes.ErrNoSpace):
		return lease.ErrStoreFull
	case errors.Is(e, rpctypes.ErrPermissionDenied), errors.Is(e, rpctypes.ErrAuthFailed),
		errors.Is(e, rpctypes.ErrInvalidAuthToken), errors.Is(e, rpctypes.ErrUserEmpty),
		errors.Is(e, rpctypes.ErrAuthOldRevision):
		return lease.ErrPermission
	}
	switch status.Code(e) {
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange, codes.AlreadyExists, codes.NotFound:
		return nil
	case codes.PermissionDenied, codes.Unauthenticated:
		return lease.ErrPermission
	}
	// Timeouts (ours or etcd's), lost connections, stopped or unhealthy members, throttling.
	return lease.ErrUnavailable
}

// notProposed reports whether err proves that a write never reached Raft: refused by the
// member before it proposed anything.
func notProposed(err error) bool {
	if errors.Is(err, errNotSent) {
		return true
	}
	e := rpctypes.Error(err)
	for _, sure := range []error{rpctypes.ErrNoLeader, rpctypes.ErrNoSpace, rpctypes.ErrPermissionDenied,
		rpctypes.ErrAuthFailed, rpctypes.ErrInvalidAuthToken, rpctypes.ErrUserEmpty, rpctypes.ErrTooManyRequests,
		rpctypes.ErrRequestTooLarge, rpctypes.ErrTooManyOps, rpctypes.ErrDuplicateKey, rpctypes.ErrEmptyKey} {
		if errors.Is(e, sure) {
			return true
		}
	}
	switch status.Code(e) {
	case codes.InvalidArgument, codes.PermissionDenied, codes.Unauthenticated:
		return true
	}
	return false
}
