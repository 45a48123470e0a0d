package swarmstore_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// TestReadBackRace: the Swarm API does not return the version an update created, so the store
// reads it back. When another write (here a twin with the same identity, such as a restarted
// controller) lands between the update and the read-back, the version read is not ours; the
// store must not hand it out, or the next renewal from memory would overwrite the twin's newer
// term and the fence would go backwards.
func TestReadBackRace(t *testing.T) {
	ctx := context.Background()
	// hook runs once, right after a service update's answer arrived and before the store's
	// read-back: the window in which another contender's write makes the read-back see its
	// version.
	var hook func()
	hooked := newStoreWithTransport(t, func(base http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := base.RoundTrip(r)
			if err == nil && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/update") && hook != nil {
				f := hook
				hook = nil
				f()
			}
			return resp, err
		})
	})
	plain := newStore(t)
	ns := leasetest.Namespace(t)
	a, _ := leasetest.NewContenderElection(hooked, ns, 6) // the running controller
	b, _ := leasetest.NewContenderElection(plain, ns, 7)  // its twin: same identity (node-3/task-6)
	c, _ := leasetest.NewContenderElection(plain, ns, 0)
	t.Cleanup(func() { _ = c.Destroy(ctx) })
	init, err := c.Init(ctx)
	if err != nil {
		t.Fatal(err)
	}
	floor := init.Fence
	var ops []leasetest.Op
	now := leasetest.InProcessTimestamp
	acquire := func(client int, e *lease.Election) {
		op := leasetest.Op{Client: client, Contender: leasetest.IdentityKey(e.Identity()), Kind: leasetest.OpTryAcquire, Call: now()}
		res, err := e.TryAcquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		op.Return, op.OK, op.ResultFence = now(), res.Acquired, res.Current.Fence
		if !res.Acquired {
			op.CurrentHolder = leasetest.IdentityKey(res.Current.Identity())
		}
		ops = append(ops, op)
		t.Logf("client %d try-acquire: acquired=%v fence #%d", client, res.Acquired, res.Current.Fence-floor)
	}
	renew := func(client int, e *lease.Election, fence uint64) {
		op := leasetest.Op{Client: client, Contender: leasetest.IdentityKey(e.Identity()), Kind: leasetest.OpRenew, Fence: fence, Call: now()}
		g, err := e.Renew(ctx, fence)
		op.Return, op.OK, op.ResultFence = now(), err == nil, g.Fence
		ops = append(ops, op)
		t.Logf("client %d renew #%d: %v", client, fence-floor, err)
	}
	acquire(0, a)
	f1 := floor + 1
	hook = func() { acquire(1, b) }
	renew(0, a, f1) // B's new term lands between A's update and A's read-back
	renew(0, a, f1) // from memory, against B's version: accepted, the store goes back to #1
	acquire(2, c)
	snap, _ := c.Inspect(ctx)
	t.Logf("store now: holder %s fence #%d", snap.HolderID+"/"+snap.TaskID, snap.Fence-floor)
	if err := leasetest.CheckInvariants(floor, ops); err != nil {
		t.Errorf("invariants: %v", err)
	}
	if res, _ := leasetest.CheckLinearizable(floor, ops, time.Second); res != "Ok" {
		t.Errorf("porcupine: %s", res)
	}
}
