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
	ns := leasetest.Namespace(t)
	e, err := lease.New(store, ns, lease.Identity{HolderID: "h", NodeID: "n", TaskID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Destroy(context.Background()) })
	if _, err := e.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	res, err := e.TryAcquire(t.Context())
	if armed.Load() {
		t.Fatal("the try-acquire sent no update")
	}
	snap, inspectErr := e.Inspect(t.Context())
	if inspectErr != nil {
		t.Fatal(inspectErr)
	}
	if err != nil || !res.Acquired {
		t.Fatalf("try-acquire whose update committed before the connection broke: acquired=%v err=%v (ambiguous: %v); the store holds %s with fence %d",
			res.Acquired, err, errors.Is(err, lease.ErrAmbiguous), snap.Record.HolderID, snap.Record.Fence)
	}
	if snap.Record.Fence != res.Grant.Fence {
		t.Errorf("granted fence %d, the store holds %d", res.Grant.Fence, snap.Record.Fence)
	}
}
