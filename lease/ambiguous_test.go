package lease_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
)

// landing is when the write that a store reports as ambiguous really lands.
type landing int

const (
	// landsAtOnce: before the store answers, so the read-back could see it.
	landsAtOnce landing = iota
	// landsLate: after the read-back and before the retry's read, like a Swarm write that
	// commits through a new Raft leader while the manager that took it is cut off.
	landsLate
	// neverLands: the write was lost.
	neverLands
)

// unsettledStore is the real memory store with one write that reports ErrAmbiguous: it lands
// when landing says, and then (landsAtOnce) another contender may act before the writer reads
// it back. It counts the writes that landed.
type unsettledStore struct {
	lease.Store
	armed   bool
	when    landing
	between func() // landsAtOnce: runs after the write landed, before the store answers
	late    func() // landsLate: the write, applied at the retry's read
	loads   int    // loads since the ambiguous write
	landed  int    // writes that landed (the memory store accepted them)
	// conflictAfter makes every write after the ambiguous one fail with ErrConflict.
	conflictAfter bool
}

func (s *unsettledStore) Load(ctx context.Context, ns string) (lease.Record, lease.Version, error) {
	s.loads++
	if s.late != nil && s.loads == 2 { // the first load is the read-back
		s.late()
		s.late = nil
	}
	return s.Store.Load(ctx, ns)
}

func (s *unsettledStore) Update(ctx context.Context, rec lease.Record, v lease.Version) (lease.Version, error) {
	if !s.armed {
		if s.conflictAfter {
			return 0, lease.ErrConflict
		}
		ver, err := s.Store.Update(ctx, rec, v)
		if err == nil {
			s.landed++
		}
		return ver, err
	}
	s.armed, s.loads = false, 0
	apply := func() {
		if _, err := s.Store.Update(ctx, rec, v); err == nil {
			s.landed++
		}
	}
	switch s.when {
	case landsAtOnce:
		apply()
		if s.between != nil {
			s.between()
		}
	case landsLate:
		s.late = apply
	case neverLands:
	}
	return 0, lease.ErrAmbiguous
}

// TestAnUnsettledWriteIsNeverReportedAsDefinite covers a write that the store reports as
// ambiguous and whose read-back shows something else: the call must neither report a plain
// refusal (the write may have landed and been overwritten since) nor write a second time when
// the first landed after the read-back.
func TestAnUnsettledWriteIsNeverReportedAsDefinite(t *testing.T) {
	ctx := context.Background()
	const ttl = 10 * time.Second
	setup := func(t *testing.T) (*unsettledStore, *leasetest.FakeClock, *lease.Election, *lease.Election, lease.Grant) {
		t.Helper()
		store := &unsettledStore{Store: memstore.New()}
		clock := leasetest.NewFakeClock(time.Now())
		elect := func(holder string) *lease.Election {
			e, err := lease.New(store, "jobs", lease.Identity{HolderID: holder}, lease.WithClock(clock), lease.WithTTL(ttl))
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
		a, b := elect("a"), elect("b")
		res, err := a.TryAcquire(ctx)
		if err != nil || !res.Acquired {
			t.Fatal(res, err)
		}
		clock.Advance(time.Second) // a renewal or release now writes a record unlike the stored one
		return store, clock, a, b, res.Grant
	}
	takeOver := func(t *testing.T, clock *leasetest.FakeClock, b *lease.Election) func() {
		return func() {
			clock.Advance(2 * ttl)
			if res, err := b.TryAcquire(ctx); err != nil || !res.Acquired {
				t.Fatalf("the other contender's takeover: %+v, %v", res, err)
			}
		}
	}

	t.Run("release landed, then another contender took over", func(t *testing.T) {
		store, clock, a, b, g := setup(t)
		store.armed, store.when, store.between = true, landsAtOnce, takeOver(t, clock, b)
		err := a.Release(ctx, g.Fence)
		if !errors.Is(err, lease.ErrAmbiguous) || !errors.Is(err, lease.ErrNotHolder) {
			t.Fatalf("release: %v; want an error that wraps ErrAmbiguous and ErrNotHolder", err)
		}
	})
	t.Run("renew landed, then another contender took over", func(t *testing.T) {
		store, clock, a, b, g := setup(t)
		store.armed, store.when, store.between = true, landsAtOnce, takeOver(t, clock, b)
		_, err := a.Renew(ctx, g.Fence)
		if !errors.Is(err, lease.ErrAmbiguous) || !errors.Is(err, lease.ErrNotHolder) {
			t.Fatalf("renew: %v; want an error that wraps ErrAmbiguous and ErrNotHolder", err)
		}
	})
	t.Run("try-acquire landed, then another contender took over", func(t *testing.T) {
		store, clock, a, b, g := setup(t)
		if err := a.Release(ctx, g.Fence); err != nil {
			t.Fatal(err)
		}
		store.armed, store.when, store.between = true, landsAtOnce, takeOver(t, clock, b)
		res, err := a.TryAcquire(ctx)
		if !errors.Is(err, lease.ErrAmbiguous) {
			t.Fatalf("try-acquire: %+v, %v; want an error that wraps ErrAmbiguous", res, err)
		}
		if res.Acquired || res.Current.HolderID != "b" {
			t.Fatalf("try-acquire: %+v; want not acquired, current holder b", res)
		}
	})
	t.Run("release landed after its read-back", func(t *testing.T) {
		store, _, a, _, g := setup(t)
		store.armed, store.when = true, landsLate
		if err := a.Release(ctx, g.Fence); err != nil {
			t.Fatalf("release: %v; want success, the write landed", err)
		}
		if store.landed != 1 {
			t.Fatalf("%d writes landed, want 1", store.landed)
		}
	})
	t.Run("renew landed after its read-back", func(t *testing.T) {
		store, _, a, _, g := setup(t)
		store.armed, store.when = true, landsLate
		renewed, err := a.Renew(ctx, g.Fence)
		if err != nil || renewed.Fence != g.Fence {
			t.Fatalf("renew: %+v, %v; want success with fence %d", renewed, err, g.Fence)
		}
		if store.landed != 1 {
			t.Fatalf("%d writes landed, want 1: the late write is the outcome", store.landed)
		}
		snap, err := a.Inspect(ctx)
		if err != nil || !snap.RenewedAt.Equal(renewed.RenewedAt) || snap.Version != renewed.Version {
			t.Fatalf("stored %+v (%v); the grant says renewed at %v, version %d", snap, err, renewed.RenewedAt, renewed.Version)
		}
		if a.Remaining(renewed) > ttl-lease.SafetyMargin(ttl) {
			t.Fatalf("remaining %v: a grant never outlasts TTL − margin from its write's start", a.Remaining(renewed))
		}
	})
	t.Run("too many conflicts after an unsettled write", func(t *testing.T) {
		store, _, a, _, g := setup(t)
		store.armed, store.when, store.conflictAfter = true, neverLands, true
		_, err := a.Renew(ctx, g.Fence)
		if !errors.Is(err, lease.ErrTooManyConflicts) || !errors.Is(err, lease.ErrAmbiguous) {
			t.Fatalf("renew: %v; want an error that wraps ErrTooManyConflicts and ErrAmbiguous", err)
		}
	})
}
