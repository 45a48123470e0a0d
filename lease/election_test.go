package lease_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
)

// countingStore counts calls and can make writes fail in chosen ways: a test double for the
// engine's retry logic, wrapped around the real memory store.
type countingStore struct {
	lease.Store
	loads, updates atomic.Int64
	// failNext, when set, is returned by the next Update instead of (ambiguousApplied: after)
	// writing.
	failNext         error
	ambiguousApplied bool
}

func (s *countingStore) Load(ctx context.Context, ns string) (lease.Record, lease.Version, error) {
	s.loads.Add(1)
	return s.Store.Load(ctx, ns)
}

func (s *countingStore) Update(ctx context.Context, rec lease.Record, v lease.Version) (lease.Version, error) {
	s.updates.Add(1)
	if err := s.failNext; err != nil {
		s.failNext = nil
		if s.ambiguousApplied {
			if _, werr := s.Store.Update(ctx, rec, v); werr != nil {
				return 0, werr
			}
		}
		return 0, err
	}
	return s.Store.Update(ctx, rec, v)
}

func newElection(t *testing.T, store lease.Store, holder string, opts ...lease.Option) *lease.Election {
	t.Helper()
	e, err := lease.New(store, "jobs", lease.Identity{HolderID: holder},
		append([]lease.Option{lease.WithClock(leasetest.NewFakeClock(time.Now()))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func newElectionWithClock(t *testing.T, store lease.Store, clock lease.Clock) *lease.Election {
	t.Helper()
	e, err := lease.New(store, "jobs", lease.Identity{HolderID: "a"}, lease.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestUndisturbedRenewIsOneWrite(t *testing.T) {
	ctx := context.Background()
	store := &countingStore{Store: memstore.New()}
	e := newElection(t, store, "a")
	res, err := e.TryAcquire(ctx)
	if err != nil || !res.Acquired {
		t.Fatal(res, err)
	}
	store.loads.Store(0)
	store.updates.Store(0)
	for range 10 {
		if _, err := e.Renew(ctx, res.Grant.Fence); err != nil {
			t.Fatal(err)
		}
	}
	if l, u := store.loads.Load(), store.updates.Load(); l != 0 || u != 10 {
		t.Fatalf("10 renewals: %d loads, %d updates; want 0 and 10", l, u)
	}
}

func TestConflictsAreRetriedThenReported(t *testing.T) {
	ctx := context.Background()
	store := &countingStore{Store: memstore.New()}
	e := newElection(t, store, "a", lease.WithMaxCASRetries(2))
	res, _ := e.TryAcquire(ctx)

	// A conflict on every write: 1 attempt from memory, then 1 + 2 retries from reads.
	alwaysConflict := &conflictStore{Store: store}
	e2 := newElection(t, alwaysConflict, "a", lease.WithMaxCASRetries(2))
	if _, err := e2.Renew(ctx, res.Grant.Fence); !errors.Is(err, lease.ErrTooManyConflicts) {
		t.Fatalf("renew under permanent conflict: %v, want ErrTooManyConflicts", err)
	}
	if got := alwaysConflict.updates.Load(); got != 3 {
		t.Fatalf("%d write attempts, want 3 (1 + max_cas_retries)", got)
	}
}

// conflictStore fails every Update with ErrConflict.
type conflictStore struct {
	lease.Store
	updates atomic.Int64
}

func (s *conflictStore) Update(context.Context, lease.Record, lease.Version) (lease.Version, error) {
	s.updates.Add(1)
	return 0, lease.ErrConflict
}

func TestAmbiguousWriteIsResolvedByReading(t *testing.T) {
	ctx := context.Background()
	for _, applied := range []bool{true, false} {
		store := &countingStore{Store: memstore.New()}
		clock := leasetest.NewFakeClock(time.Now())
		e := newElectionWithClock(t, store, clock)
		res, err := e.TryAcquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second) // the renewal writes a record that differs from the stored one
		store.failNext, store.ambiguousApplied = lease.ErrAmbiguous, applied
		g, err := e.Renew(ctx, res.Grant.Fence)
		if err != nil || g.Fence != res.Grant.Fence {
			t.Fatalf("applied=%v: renew after an ambiguous write: %+v, %v", applied, g, err)
		}
		snap, _ := e.Inspect(ctx)
		if !snap.RenewedAt.Equal(g.RenewedAt) {
			t.Fatalf("applied=%v: stored renewal %v, grant says %v", applied, snap.RenewedAt, g.RenewedAt)
		}
		// Applied: the read-back settles it with no second write. Not applied: one retry.
		wantUpdates := int64(2)
		if applied {
			wantUpdates = 1
		}
		if got := store.updates.Load(); got != wantUpdates { // the try-acquire created the election
			t.Fatalf("applied=%v: %d updates, want %d", applied, got, wantUpdates)
		}
	}
}

func TestNewValidatesSettings(t *testing.T) {
	store := memstore.New()
	for name, tc := range map[string]struct {
		ns   string
		id   lease.Identity
		opts []lease.Option
	}{
		"empty namespace":  {"", lease.Identity{HolderID: "a"}, nil},
		"bad namespace":    {"a b", lease.Identity{HolderID: "a"}, nil},
		"no holder":        {"x", lease.Identity{}, nil},
		"short TTL":        {"x", lease.Identity{HolderID: "a"}, []lease.Option{lease.WithTTL(100 * time.Millisecond)}},
		"sub-ms TTL":       {"x", lease.Identity{HolderID: "a"}, []lease.Option{lease.WithTTL(2*time.Second + time.Microsecond)}},
		"skew above TTL":   {"x", lease.Identity{HolderID: "a"}, []lease.Option{lease.WithTTL(2 * time.Second), lease.WithMaxClockSkew(3 * time.Second)}},
		"negative retries": {"x", lease.Identity{HolderID: "a"}, []lease.Option{lease.WithMaxCASRetries(-1)}},
	} {
		if _, err := lease.New(store, tc.ns, tc.id, tc.opts...); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}
