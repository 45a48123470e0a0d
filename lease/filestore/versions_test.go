package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
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

// TestReadShardVersionsListsIntoTheArray: ReadShardVersions sets every shard's version — from the
// table, from the slots' header lines for a shard the table has no entry for (a table lost with
// a power cut) — as ShardVersions lists it and LoadShard reads it, and 0 for every shard not
// stored, whatever the array held before.
func TestReadShardVersionsListsIntoTheArray(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openStore(t, dir)
	stored := []int{0, 2, 3, 7}
	for _, i := range stored {
		writeShard(t, s, rooms.ShardKey{Namespace: "read", Index: i}, 2)
	}
	table := filepath.Join(dir, "read.rooms.versions")
	f, err := os.OpenFile(table, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 8), 3*8); err != nil { // shard 3's entry, cleared
		t.Fatal(err)
	}
	f.Close()

	var versions [rooms.MaxShards]lease.Version
	for i := range versions {
		versions[i] = 1 // left from an earlier listing
	}
	before := filestore.HeaderListings(s)
	if err := s.ReadShardVersions(ctx, "read", &versions); err != nil {
		t.Fatal(err)
	}
	if n := filestore.HeaderListings(s) - before; n != 1 {
		t.Errorf("%d shards listed from their headers, want 1 (shard 3)", n)
	}
	listed, err := s.ShardVersions(ctx, "read")
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != len(stored) {
		t.Errorf("ShardVersions lists %v, want shards %v", listed, stored)
	}
	for i, v := range versions {
		_, loaded, err := s.LoadShard(ctx, rooms.ShardKey{Namespace: "read", Index: i})
		if errors.Is(err, lease.ErrNotFound) {
			loaded, err = 0, nil
		}
		if err != nil || v != loaded || v != listed[i] {
			t.Errorf("shard %d: read %d, listed %d, loads at %d (%v)", i, v, listed[i], loaded, err)
		}
	}
}

// writeShard creates shard key and writes it writes more times, and returns its version.
func writeShard(t *testing.T, s *filestore.Store, key rooms.ShardKey, writes int) lease.Version {
	t.Helper()
	ctx := t.Context()
	ver, err := s.CreateShard(ctx, key, []byte(`{"n":0}`))
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= writes; n++ {
		if ver, err = s.UpdateShard(ctx, key, fmt.Appendf(nil, `{"n":%d}`, n), ver); err != nil {
			t.Fatalf("shard %d, write %d: %v", key.Index, n, err)
		}
	}
	return ver
}
