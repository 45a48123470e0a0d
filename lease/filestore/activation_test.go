package filestore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/rooms/roomstest"
)

// TestActivationsShareFlushes: campaigns that activate rooms of different shards at the same
// time, with the active-room limit on, stay exact although the activation lock is let go once a
// write is visible to the next count, before its flush: with room for all but some, exactly that
// many are refused. How many flushes they share depends on how the writers meet (logged);
// rooms' TestActivationLockEndsWhenTheWriteIsVisible shows the release itself.
func TestActivationsShareFlushes(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	const shards, limit = 64, 48
	m, err := rooms.New(s, "activate", rooms.WithShards(shards), rooms.WithMaxActiveRooms(limit), rooms.WithMaxClockSkew(0))
	if err != nil {
		t.Fatal(err)
	}
	// Every shard written once, so that the campaigns below overwrite slots in place.
	every := make([]int, shards)
	for i := range every {
		every[i] = i
	}
	roomstest.WriteShards(t, m, every...)
	before := filestore.FlushCount(s)
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, refused := 0, 0
	// One campaign per shard: no two share a shard's write.
	for i := range shards {
		room := roomstest.RoomInShard(m, i)
		wg.Go(func() {
			<-start
			_, err := m.Campaign(ctx, room, "c", 30*time.Second, "")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, rooms.ErrCapacity):
				refused++
			default:
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	flushes := filestore.FlushCount(s) - before
	t.Logf("%d campaigns: %d won, %d refused, %d flush calls", shards, won, refused, flushes)
	if won != limit || refused != shards-limit {
		t.Errorf("%d won and %d refused, want %d and %d (the limit)", won, refused, limit, shards-limit)
	}
}
