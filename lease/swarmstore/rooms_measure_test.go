package swarmstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
)

// countingStore counts shard writes.
type countingStore struct {
	*swarmstore.Store
	writes atomic.Int64
}

func (c *countingStore) CreateShard(ctx context.Context, key rooms.ShardKey, data []byte) (lease.Version, error) {
	c.writes.Add(1)
	return c.Store.CreateShard(ctx, key, data)
}

func (c *countingStore) UpdateShard(ctx context.Context, key rooms.ShardKey, data []byte, expected lease.Version) (lease.Version, error) {
	c.writes.Add(1)
	return c.Store.UpdateShard(ctx, key, data, expected)
}

// parallel runs call(i) for i in [0, n) on workers goroutines and returns the elapsed time.
func parallel(n, workers int, call func(i int)) time.Duration {
	start := time.Now()
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				call(i)
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// BenchmarkRoomsMeasure fills the test Swarm with rooms to measure the limits written down in
// docs/rooms.md. It takes about a minute and writes tens of MB to the Raft log, so it is a
// benchmark, never part of `go test`:
//
//	go test -run '^$' -bench RoomsMeasure -benchtime 1x -v ./swarmstore
func BenchmarkRoomsMeasure(b *testing.B) {
	b.Run("TypicalRooms", func(b *testing.B) {
		for b.Loop() {
			measureTypical(b)
		}
	})
	b.Run("FullShard", func(b *testing.B) {
		for b.Loop() {
			measureFullShard(b, rooms.DefaultMaxShardBytes)
		}
	})
	b.Run("FullShardAtMaxBudget", func(b *testing.B) {
		for b.Loop() {
			measureFullShard(b, rooms.MaxShardBytes)
		}
	})
}

// measureTypical: 1,000 active rooms with a 64-character metadata each, 64 shards.
func measureTypical(t testing.TB) {
	const n, workers = 1000, 16
	ctx := context.Background()
	store := &countingStore{Store: newStore(t)}
	ns := leasetest.Namespace(t)
	t.Cleanup(func() { _ = store.DeleteShards(context.Background(), ns) })
	m, err := rooms.New(store, ns)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n)
	tokens := make([]string, n)
	for i := range ids {
		ids[i] = rooms.NewRoomID()
	}
	meta := strings.Repeat("m", 64)
	var failed atomic.Int64
	took := parallel(n, workers, func(i int) {
		res, err := m.Campaign(ctx, ids[i], fmt.Sprintf("worker-%04d", i), rooms.MaxTTL, meta)
		if err != nil || res.Status != rooms.StatusLeader {
			failed.Add(1)
			t.Errorf("campaign %d: %v", i, err)
			return
		}
		tokens[i] = res.Token
	})
	t.Logf("%d campaigns (%d goroutines): %v, %.0f/s, %d shard writes", n, workers, took.Round(time.Millisecond),
		float64(n)/took.Seconds(), store.writes.Load())
	if failed.Load() > 0 {
		t.FailNow()
	}
	logShards(t, store.Store, ns)

	store.writes.Store(0)
	took = parallel(n, workers, func(i int) {
		if _, err := m.Renew(ctx, ids[i], tokens[i], rooms.MaxTTL); err != nil {
			t.Errorf("renew %d: %v", i, err)
		}
	})
	t.Logf("%d renewals (%d goroutines): %v, %.0f/s, %d shard writes", n, workers, took.Round(time.Millisecond),
		float64(n)/took.Seconds(), store.writes.Load())
	const seq = 100
	took = parallel(seq, 1, func(i int) {
		if _, err := m.Renew(ctx, ids[i], tokens[i], rooms.MaxTTL); err != nil {
			t.Errorf("renew %d: %v", i, err)
		}
	})
	t.Logf("%d sequential renewals: %v each", seq, (took / seq).Round(time.Microsecond))
	took = parallel(seq, 1, func(i int) {
		if _, err := m.Status(ctx, ids[i]); err != nil {
			t.Errorf("status %d: %v", i, err)
		}
	})
	t.Logf("%d sequential status reads: %v each", seq, (took / seq).Round(time.Microsecond))
	start := time.Now()
	if _, err := store.ListShards(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Logf("listing all shards (the active-room count of an activation): %v", time.Since(start).Round(time.Microsecond))
	// One more activation at capacity: the count is exact within a process.
	full, err := rooms.New(store, ns, rooms.WithMaxActiveRooms(n))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := full.Campaign(ctx, rooms.NewRoomID(), "one-too-many", rooms.MaxTTL, ""); !errors.Is(err, rooms.ErrCapacity) {
		t.Fatalf("campaign number %d with a limit of %d: %v", n+1, n, err)
	}
}

// measureFullShard fills one shard with rooms of the most expensive metadata until its byte
// budget refuses, then checks that writes of the full shard still succeed.
func measureFullShard(t testing.TB, budget int) {
	const workers = 8
	ctx := context.Background()
	store := &countingStore{Store: newStore(t)}
	ns := leasetest.Namespace(t)
	t.Cleanup(func() { _ = store.DeleteShards(context.Background(), ns) })
	m, err := rooms.New(store, ns, rooms.WithMaxShardBytes(budget))
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("\x01", rooms.MaxMetadata) // 6 bytes each in JSON
	var (
		mu     sync.Mutex
		tokens = map[string]string{}
		full   atomic.Bool
	)
	shard := -1
	took := parallel(1000, workers, func(int) {
		if full.Load() {
			return
		}
		id := rooms.NewRoomID()
		mu.Lock()
		if shard < 0 {
			shard = m.ShardOf(id)
		}
		for m.ShardOf(id) != shard {
			id = rooms.NewRoomID()
		}
		mu.Unlock()
		res, err := m.Campaign(ctx, id, strings.Repeat("c", 64), rooms.MaxTTL, big)
		switch {
		case errors.Is(err, rooms.ErrShardFull):
			full.Store(true)
		case err != nil:
			t.Errorf("campaign: %v", err)
		default:
			mu.Lock()
			tokens[id] = res.Token
			mu.Unlock()
		}
	})
	if !full.Load() {
		t.Fatal("the shard never filled up")
	}
	t.Logf("budget %d KiB: %d rooms with 1024 control characters of metadata fit one shard (%v, %d writes)",
		budget>>10, len(tokens), took.Round(time.Millisecond), store.writes.Load())
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range tokens {
			if !yield(id) {
				return
			}
		}
	})
	start := time.Now()
	for _, id := range ids[:10] {
		if _, err := m.Renew(ctx, id, tokens[id], rooms.MaxTTL); err != nil {
			t.Fatalf("renewal in the full shard: %v", err)
		}
	}
	t.Logf("renewal of a room in the full shard: %v each", (time.Since(start) / 10).Round(time.Microsecond))
	logShards(t, store.Store, ns)
}

// logShards reports the shard documents' sizes and the largest shard service's size as the API
// returns it (spec and previous spec: what travels in one Raft proposal).
func logShards(t testing.TB, store *swarmstore.Store, ns string) {
	t.Helper()
	ctx := context.Background()
	shards, err := store.ListShards(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	var total, biggest, biggestIdx int
	sizes := []int{}
	for _, s := range shards {
		total += len(s.Data)
		sizes = append(sizes, len(s.Data))
		if len(s.Data) > biggest {
			biggest, biggestIdx = len(s.Data), s.Index
		}
	}
	slices.Sort(sizes)
	res, err := store.Docker().ServiceInspect(ctx, swarmstore.RoomsShardName(ns, biggestIdx), client.ServiceInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d shards, %d bytes of documents; shard sizes min %d, median %d, max %d; largest shard service as returned by the API: %d bytes",
		len(shards), total, sizes[0], sizes[len(sizes)/2], biggest, len(res.Raw))
}
