package lease_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
)

// blindStore is a store whose writes can also be blind (lease.BlindUpdater), as the Swarm
// store's: UpdateBlind writes like Update and answers "applied, version unknown". It counts
// the calls of each kind.
type blindStore struct {
	lease.Store
	loads, updates, blindUpdates atomic.Int64
}

func (s *blindStore) Load(ctx context.Context, ns string) (lease.Record, lease.Version, error) {
	s.loads.Add(1)
	return s.Store.Load(ctx, ns)
}

func (s *blindStore) Update(ctx context.Context, rec lease.Record, v lease.Version) (lease.Version, error) {
	s.updates.Add(1)
	return s.Store.Update(ctx, rec, v)
}

func (s *blindStore) UpdateBlind(ctx context.Context, rec lease.Record, v lease.Version) (lease.Version, error) {
	s.blindUpdates.Add(1)
	if _, err := s.Store.Update(ctx, rec, v); err != nil {
		return 0, err
	}
	return 0, nil
}

// TestContenderAcquiresBlind: a contender's acquisition writes blind where the store allows it —
// its term starts without learning the version — and the term's first renewal reads before it
// writes, after which renewals write on their own versions again. A one-shot TryAcquire, which
// reports the version, keeps Update.
func TestContenderAcquiresBlind(t *testing.T) {
	ctx := context.Background()
	store := &blindStore{Store: memstore.New()}
	if _, err := newElection(t, store, "setup").Init(ctx); err != nil { // an existing record: acquisitions update it
		t.Fatal(err)
	}

	one := newElection(t, store, "one-shot")
	res, err := one.TryAcquire(ctx)
	if err != nil || !res.Acquired || res.Grant.Version == 0 {
		t.Fatalf("one-shot try-acquire: %+v, %v; want a grant with its version", res, err)
	}
	if b, u := store.blindUpdates.Load(), store.updates.Load(); b != 0 || u != 1 {
		t.Fatalf("one-shot try-acquire: %d blind writes, %d updates; want 0 and 1", b, u)
	}
	if err := one.Release(ctx, res.Grant.Fence); err != nil {
		t.Fatal(err)
	}

	store.loads.Store(0)
	store.updates.Store(0)
	c := contender(t, store, "a", time.Second)
	c.RenewInterval = 100 * time.Millisecond
	renewed := make(chan lease.Snapshot, 16)
	c.OnState = func(s lease.Snapshot) {
		if s.HolderID == "a" {
			renewed <- s
		}
	}
	terms, lead := termsLed()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx, lead) }()
	term := within(t, terms, 2*time.Second, "the contender's term")
	if term.Grant.Version != 0 {
		t.Fatalf("the blind acquisition's grant has version %d; want 0 (unknown)", term.Grant.Version)
	}
	if b, u := store.blindUpdates.Load(), store.updates.Load(); b != 1 || u != 0 {
		t.Fatalf("the contender's acquisition: %d blind writes, %d updates; want 1 and 0", b, u)
	}
	within(t, renewed, 2*time.Second, "the acquisition's state")
	loadsAtTerm := store.loads.Load()
	for i := range 3 { // the first renewal reads first; the next two write on their own versions
		s := within(t, renewed, 2*time.Second, "a renewal")
		if s.Version == 0 {
			t.Fatalf("renewal %d reports version 0; a renewal learns its version", i+1)
		}
	}
	if extra := store.loads.Load() - loadsAtTerm; extra != 1 {
		t.Fatalf("three renewals after a blind acquisition made %d reads; want 1 (the first renewal's)", extra)
	}
	stop()
	if err := within(t, done, 2*time.Second, "the contender to end"); err != nil {
		t.Fatal(err)
	}
}
