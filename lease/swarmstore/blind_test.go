package swarmstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// TestBlindUpdateIsOneRequest: a blind update of an anchor the store has just read is one
// request, the service update alone — no read-back — and answers "applied, version unknown";
// the write is in the store, and it is as conditional as Update.
func TestBlindUpdateIsOneRequest(t *testing.T) {
	ctx := context.Background()
	var counts requestCounts
	s := newCountingStore(t, &counts)
	ns := leasetest.Namespace(t)
	t.Cleanup(func() { _ = s.Delete(context.Background(), ns) })
	now := time.Now().UTC().Truncate(time.Microsecond)
	rec := lease.Record{Namespace: ns, Fence: 7, RenewedAt: now, ExpiresAt: now}
	if _, err := s.Create(ctx, rec); err != nil {
		t.Fatal(err)
	}
	_, ver, err := s.Load(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	held := lease.Record{Namespace: ns, HolderID: "a", Fence: 8, AcquiredAt: now, RenewedAt: now,
		ExpiresAt: now.Add(time.Minute), TTL: time.Minute}
	counts.reads.Store(0)
	counts.writes.Store(0)
	got, err := s.UpdateBlind(ctx, held, ver)
	if err != nil || got != 0 {
		t.Fatalf("blind update: version %d, %v; want 0 (unknown), nil", got, err)
	}
	if r, w := counts.reads.Load(), counts.writes.Load(); r != 0 || w != 1 {
		t.Fatalf("blind update: %d reads, %d writes; want 0 and 1", r, w)
	}
	back, backVer, err := s.Load(ctx, ns)
	if err != nil || !back.Equal(held) || backVer <= ver {
		t.Fatalf("read after the blind update: %+v at %d, %v; want %+v above %d", back, backVer, err, held, ver)
	}
	// A stale expected version is still refused: the blind write is as conditional as Update.
	if _, err := s.UpdateBlind(ctx, held, ver); !errors.Is(err, lease.ErrConflict) {
		t.Fatalf("a blind update on a replaced version: %v; want ErrConflict", err)
	}
}
