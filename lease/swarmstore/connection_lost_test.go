package swarmstore_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// TestConnectionLostAfterUpdateIsAmbiguous: the engine applies an update, then the connection
// breaks before the answer arrives — what a client sees when the manager it talks to is killed
// while the write commits through Raft (found by the fault campaign on three managers). The
// write may have committed, so the store must report it ambiguous: the engine then reads again
// and finds its own record, and the try-acquire is a win, not "store unreachable" with the
// lease silently taken.
func TestConnectionLostAfterUpdateIsAmbiguous(t *testing.T) {
	var armed atomic.Bool
	store := newStoreWithTransport(t, func(base http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := base.RoundTrip(r)
			if err == nil && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/update") && armed.CompareAndSwap(true, false) {
				resp.Body.Close()
				return nil, &net.OpError{Op: "read", Net: "unix", Err: syscall.ECONNRESET}
			}
			return resp, err
		})
	})
	e := newContender(t, store)
	if _, err := e.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	res, err := e.TryAcquire(t.Context())
	if armed.Load() {
		t.Fatal("the try-acquire sent no update")
	}
	wantWonAndStored(t, e, res, err, "try-acquire whose update committed before the connection broke")
}

// newContender is one contender on a fresh election of store, destroyed after the test.
func newContender(t *testing.T, store lease.Store) *lease.Election {
	t.Helper()
	e, err := lease.New(store, leasetest.Namespace(t), lease.Identity{HolderID: "h", NodeID: "n", TaskID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Destroy(context.Background()) })
	return e
}

// wantWonAndStored fails the test unless the try-acquire (res, err) won and the store holds
// the fence it granted.
func wantWonAndStored(t *testing.T, e *lease.Election, res lease.TryAcquireResult, err error, what string) {
	t.Helper()
	snap, inspectErr := e.Inspect(t.Context())
	if inspectErr != nil {
		t.Fatal(inspectErr)
	}
	if err != nil || !res.Acquired {
		t.Fatalf("%s: acquired=%v err=%v (ambiguous: %v); the store holds %s with fence %d",
			what, res.Acquired, err, errors.Is(err, lease.ErrAmbiguous), snap.Record.HolderID, snap.Record.Fence)
	}
	if snap.Record.Fence != res.Grant.Fence {
		t.Errorf("granted fence %d, the store holds %d", res.Grant.Fence, snap.Record.Fence)
	}
}

// TestReadBackFailureAfterCreateIsAmbiguous: the anchor service is created, then the read that
// learns its version fails (the manager went away in between). The create happened, so the
// store must report "applied, version unknown" (ambiguous): the engine then reads again, finds
// its own record, and the first try-acquire is a win — not "store unreachable" with the lease
// silently taken.
func TestReadBackFailureAfterCreateIsAmbiguous(t *testing.T) {
	var created, failed atomic.Bool
	store := newStoreWithTransport(t, func(base http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && created.Load() && failed.CompareAndSwap(false, true) {
				return nil, &net.OpError{Op: "dial", Net: "unix", Err: syscall.ECONNREFUSED}
			}
			resp, err := base.RoundTrip(r)
			if err == nil && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/services/create") {
				created.Store(true)
			}
			return resp, err
		})
	})
	e := newContender(t, store)
	res, err := e.TryAcquire(t.Context())
	if !failed.Load() {
		t.Fatal("no read after the create was failed")
	}
	wantWonAndStored(t, e, res, err, "try-acquire whose create happened before its read-back failed")
}
