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

// TestAnUnsettledWriteIsNeverReportedAsDefinite covers a write that the store reports as
// ambiguous and whose read-back shows something else: the call must neither report a plain
// refusal (the write may have landed and been overwritten since) nor start a second term when
// the first write landed after the read-back.
func TestAnUnsettledWriteIsNeverReportedAsDefinite(t *testing.T) {
	ctx := context.Background()
	const ttl = 10 * time.Second
	type world struct {
		store *leasetest.UnsettledStore
		clock *leasetest.FakeClock
		a, b  *lease.Election
	}
	newWorld := func(t *testing.T) world {
		t.Helper()
		w := world{store: &leasetest.UnsettledStore{Store: memstore.New()}, clock: leasetest.NewFakeClock(time.Now())}
		elect := func(holder string) *lease.Election {
			e, err := lease.New(w.store, "jobs", lease.Identity{HolderID: holder}, lease.WithClock(w.clock), lease.WithTTL(ttl))
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
		w.a, w.b = elect("a"), elect("b")
		return w
	}
	// holding: a holds the lease, and a second later renews or releases it with a record unlike
	// the stored one.
	holding := func(t *testing.T) (world, lease.Grant) {
		t.Helper()
		w := newWorld(t)
		res, err := w.a.TryAcquire(ctx)
		if err != nil || !res.Acquired {
			t.Fatal(res, err)
		}
		w.clock.Advance(time.Second)
		return w, res.Grant
	}
	// bTakesOver: a's lease runs out and b acquires, before a reads its write back.
	bTakesOver := func(t *testing.T, w world) func() {
		return func() {
			w.clock.Advance(2 * ttl)
			if res, err := w.b.TryAcquire(ctx); err != nil || !res.Acquired {
				t.Errorf("the other contender's takeover: %+v, %v", res, err)
			}
		}
	}
	wantRefusedAmbiguously := func(t *testing.T, what string, err error) {
		t.Helper()
		if !errors.Is(err, lease.ErrAmbiguous) || !errors.Is(err, lease.ErrNotHolder) {
			t.Fatalf("%s: %v; want an error that wraps ErrAmbiguous and ErrNotHolder", what, err)
		}
	}
	wantHeldByB := func(t *testing.T, res lease.TryAcquireResult, err error) {
		t.Helper()
		if !errors.Is(err, lease.ErrAmbiguous) {
			t.Fatalf("try-acquire: %+v, %v; want an error that wraps ErrAmbiguous", res, err)
		}
		if res.Acquired || res.Current.HolderID != "b" {
			t.Fatalf("try-acquire: %+v; want not acquired, current holder b", res)
		}
	}

	t.Run("release landed, then another contender took over", func(t *testing.T) {
		w, g := holding(t)
		w.store.Arm(leasetest.LandsAtOnce, bTakesOver(t, w), false)
		wantRefusedAmbiguously(t, "release", w.a.Release(ctx, g.Fence))
	})
	t.Run("renew landed, then another contender took over", func(t *testing.T) {
		w, g := holding(t)
		w.store.Arm(leasetest.LandsAtOnce, bTakesOver(t, w), false)
		_, err := w.a.Renew(ctx, g.Fence)
		wantRefusedAmbiguously(t, "renew", err)
	})
	t.Run("try-acquire landed, then another contender took over", func(t *testing.T) {
		w, g := holding(t)
		if err := w.a.Release(ctx, g.Fence); err != nil {
			t.Fatal(err)
		}
		w.store.Arm(leasetest.LandsAtOnce, bTakesOver(t, w), false)
		res, err := w.a.TryAcquire(ctx)
		wantHeldByB(t, res, err)
	})
	t.Run("first try-acquire's create landed after its read-back", func(t *testing.T) {
		w := newWorld(t)
		w.store.Arm(leasetest.LandsLate, nil, false)
		res, err := w.a.TryAcquire(ctx)
		if err != nil || !res.Acquired {
			t.Fatalf("try-acquire: %+v, %v; want acquired, the create landed", res, err)
		}
		snap, _ := w.a.Inspect(ctx)
		if w.store.Landed() != 1 || snap.Fence != res.Grant.Fence {
			t.Fatalf("%d writes landed, stored fence %d, granted %d; want 1 write, one term", w.store.Landed(), snap.Fence, res.Grant.Fence)
		}
	})
	t.Run("first try-acquire's create landed late, then another contender took over", func(t *testing.T) {
		w := newWorld(t)
		w.store.Arm(leasetest.LandsLate, bTakesOver(t, w), false)
		res, err := w.a.TryAcquire(ctx)
		wantHeldByB(t, res, err)
	})
	t.Run("release landed after its read-back", func(t *testing.T) {
		w, g := holding(t)
		w.store.Arm(leasetest.LandsLate, nil, false)
		if err := w.a.Release(ctx, g.Fence); err != nil {
			t.Fatalf("release: %v; want success, the write landed", err)
		}
		if got := w.store.Landed(); got != 2 { // the acquisition and the release
			t.Fatalf("%d writes landed, want 2: the late release is the outcome", got)
		}
	})
	t.Run("renew landed after its read-back renews again, for a deadline from now", func(t *testing.T) {
		w, g := holding(t)
		// The write blocked for 5 s before it landed.
		w.store.Arm(leasetest.LandsLate, func() { w.clock.Advance(5 * time.Second) }, false)
		renewed, err := w.a.Renew(ctx, g.Fence)
		if err != nil || renewed.Fence != g.Fence {
			t.Fatalf("renew: %+v, %v; want success with fence %d", renewed, err, g.Fence)
		}
		if got, want := w.a.Remaining(renewed), ttl-lease.SafetyMargin(ttl); got != want {
			t.Fatalf("remaining %v, want %v: a renewal's deadline counts from the write that confirmed it", got, want)
		}
		snap, err := w.a.Inspect(ctx)
		if err != nil || !snap.RenewedAt.Equal(renewed.RenewedAt) || snap.Version != renewed.Version {
			t.Fatalf("stored %+v (%v); the grant says renewed at %v, version %d", snap, err, renewed.RenewedAt, renewed.Version)
		}
	})
	t.Run("too many conflicts after an unsettled write", func(t *testing.T) {
		w, g := holding(t)
		w.store.Arm(leasetest.NeverLands, nil, true)
		_, err := w.a.Renew(ctx, g.Fence)
		if !errors.Is(err, lease.ErrTooManyConflicts) || !errors.Is(err, lease.ErrAmbiguous) {
			t.Fatalf("renew: %v; want an error that wraps ErrTooManyConflicts and ErrAmbiguous", err)
		}
	})
}

// staleCreateStore lands every create but reports it ambiguous, and answers the first
// staleLoads reads with NotFound, as a Raft leader that has not applied the create does.
type staleCreateStore struct {
	lease.Store
	staleLoads int
}

func (s *staleCreateStore) Load(ctx context.Context, namespace string) (lease.Record, lease.Version, error) {
	if s.staleLoads > 0 {
		s.staleLoads--
		return lease.Record{}, 0, lease.ErrNotFound
	}
	return s.Store.Load(ctx, namespace)
}

func (s *staleCreateStore) Create(ctx context.Context, rec lease.Record) (lease.Version, error) {
	if _, err := s.Store.Create(ctx, rec); err != nil && !errors.Is(err, lease.ErrExists) {
		return 0, err
	}
	return 0, lease.ErrAmbiguous
}

// Init after creates whose outcome stayed unknown, read back by stale reads that do not show
// them yet: creating an election is idempotent, and once a read shows it, it exists.
func TestInitAfterAmbiguousCreatesReadsOnceMore(t *testing.T) {
	store := &staleCreateStore{Store: memstore.New(), staleLoads: 3}
	e, err := lease.New(store, "jobs", lease.Identity{HolderID: "h"})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := e.Init(context.Background())
	if err != nil || !snap.Exists {
		t.Fatalf("init: exists=%v err=%v", snap.Exists, err)
	}
}
