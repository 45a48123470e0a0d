package filestore_test

import (
	"context"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/rooms/roomstest"
)

// TestShardVersionsFromTheTable: once every shard has been written, the active-room count's
// listing of shard versions comes from the namespace's version table, not from the slots'
// header lines, and still names the version of the last write — also one made by another
// Store (another process).
func TestShardVersionsFromTheTable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, other := openStore(t, dir), openStore(t, dir)
	const shards = 16
	m, err := rooms.New(s, "table", rooms.WithShards(shards), rooms.WithMaxClockSkew(0))
	if err != nil {
		t.Fatal(err)
	}
	for i := range shards {
		if _, err := m.Campaign(ctx, roomstest.RoomInShard(m, i), "c", 30*time.Second, ""); err != nil {
			t.Fatal(err)
		}
	}
	key := rooms.ShardKey{Namespace: "table", Index: 5}
	_, ver, err := other.LoadShard(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	written, err := other.UpdateShard(ctx, key, []byte(`{}`), ver)
	if err != nil {
		t.Fatal(err)
	}
	before := filestore.HeaderListings(s)
	versions, err := s.ShardVersions(ctx, "table")
	if err != nil {
		t.Fatal(err)
	}
	if n := filestore.HeaderListings(s) - before; n != 0 {
		t.Errorf("%d shards listed from their slots' headers, want none", n)
	}
	if len(versions) != shards || versions[5] != written {
		t.Errorf("%d shards, shard 5 at %d; want %d shards, shard 5 at %d (the other Store's write)", len(versions), versions[5], shards, written)
	}
	for i, v := range versions {
		if _, loaded, err := s.LoadShard(ctx, rooms.ShardKey{Namespace: "table", Index: i}); err != nil || loaded != v {
			t.Errorf("shard %d: listed at %d, loads at %d (%v)", i, v, loaded, err)
		}
	}
}
