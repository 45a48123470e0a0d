package filestore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// TestConcurrentShardWritesShareFlushes: writes of different shards that arrive together are
// made durable by shared flushes — far fewer flush system calls than writes — and every write
// that returned is what the store serves, from this Store and from a fresh one (another
// process's view).
func TestConcurrentShardWritesShareFlushes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	const shards, rounds = 64, 20
	versions := make([]lease.Version, shards)
	key := func(i int) rooms.ShardKey { return rooms.ShardKey{Namespace: "group", Index: i} }
	for i := range shards {
		v, err := s.CreateShard(ctx, key(i), []byte(`{"n":0}`))
		if err != nil {
			t.Fatal(err)
		}
		versions[i] = v
	}
	// Every write of a round waits for the round's start, so the writes meet in the store as
	// a server's concurrent requests do; the first round grows the slots (no group commit).
	before := filestore.FlushCount(s)
	for round := 1; round <= rounds; round++ {
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make([]error, shards)
		for i := range shards {
			wg.Go(func() {
				<-start
				v, err := s.UpdateShard(ctx, key(i), fmt.Appendf(nil, `{"n":%d}`, round), versions[i])
				versions[i], errs[i] = v, err
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, shard %d: %v", round, i, err)
			}
		}
	}
	flushes := filestore.FlushCount(s) - before
	writes := uint64(shards * rounds)
	t.Logf("%d writes, %d flush calls (%.2f per write)", writes, flushes, float64(flushes)/float64(writes))
	if flushes == 0 || flushes > writes/4 {
		t.Errorf("%d flush calls for %d concurrent writes: want at least one and at most a quarter as many", flushes, writes)
	}
	fresh := openStore(t, dir)
	want := fmt.Sprintf(`{"n":%d}`, rounds)
	for i := range shards {
		for _, st := range []*filestore.Store{s, fresh} {
			data, v, err := st.LoadShard(ctx, key(i))
			if err != nil || string(data) != want || v != versions[i] {
				t.Fatalf("shard %d: %s at version %d (%v), want %s at %d", i, data, v, err, want, versions[i])
			}
		}
	}
}
