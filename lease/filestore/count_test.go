package filestore_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/rooms/roomstest"
)

// countingStore is a file store that counts the shard reads the engine asks for.
type countingStore struct {
	*filestore.Store
	loads, lists, versions atomic.Int64
}

func (s *countingStore) LoadShard(ctx context.Context, key rooms.ShardKey) ([]byte, lease.Version, error) {
	s.loads.Add(1)
	return s.Store.LoadShard(ctx, key)
}

func (s *countingStore) ListShards(ctx context.Context, namespace string) ([]rooms.Shard, error) {
	s.lists.Add(1)
	return s.Store.ListShards(ctx, namespace)
}

func (s *countingStore) ShardVersions(ctx context.Context, namespace string) (map[int]lease.Version, error) {
	s.versions.Add(1)
	return s.Store.ShardVersions(ctx, namespace)
}

// ReadShardVersions is counted too: the engine prefers it, and the embedded Store's would not be.
func (s *countingStore) ReadShardVersions(ctx context.Context, namespace string, versions *[rooms.MaxShards]lease.Version) error {
	s.versions.Add(1)
	return s.Store.ReadShardVersions(ctx, namespace, versions)
}

func (s *countingStore) reset() { s.loads.Store(0); s.lists.Store(0); s.versions.Store(0) }

// TestCapacityRefusalReadsOneShard: with every shard holding active rooms, a campaign for a
// new room that the active-room limit refuses reads its own shard and the shards' versions —
// not every shard — and a shard another process changed meanwhile is read once more.
func TestCapacityRefusalReadsOneShard(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const shards, limit = 16, 64
	counted := &countingStore{Store: openStore(t, dir)}
	m, err := rooms.New(counted, "count", rooms.WithShards(shards), rooms.WithMaxActiveRooms(limit), rooms.WithMaxClockSkew(0))
	if err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{}
	for range limit {
		room := rooms.NewRoomID()
		res, err := m.Campaign(ctx, room, "a", 60*time.Second, "")
		if err != nil {
			t.Fatal(err)
		}
		tokens[room] = res.Token
	}
	refused := func(want int64) {
		t.Helper()
		counted.reset()
		_, err := m.Campaign(ctx, rooms.NewRoomID(), "b", 60*time.Second, "")
		if !errors.Is(err, rooms.ErrCapacity) {
			t.Fatalf("campaign over the limit: %v", err)
		}
		// Up to two counts: a refusal decided on the remembered document is decided again on a
		// fresh read.
		if counted.lists.Load() != 0 || counted.versions.Load() < 1 || counted.versions.Load() > 2 || counted.loads.Load() != want {
			t.Fatalf("a refused campaign: %d listings of every shard, %d version listings, %d shard reads; want 0, 1 or 2, %d",
				counted.lists.Load(), counted.versions.Load(), counted.loads.Load(), want)
		}
	}
	refused(1) // its own shard
	refused(1)

	// Another process renews one room: that shard, and only it, is read again.
	other, err := rooms.New(openStore(t, dir), "count", rooms.WithShards(shards), rooms.WithMaxActiveRooms(limit), rooms.WithMaxClockSkew(0))
	if err != nil {
		t.Fatal(err)
	}
	var renewed string
	for room, token := range tokens {
		if _, err := other.Renew(ctx, room, token, 60*time.Second); err != nil {
			t.Fatal(err)
		}
		renewed = room
		break
	}
	counted.reset()
	_, err = m.Campaign(ctx, newRoomOutside(m, m.ShardOf(renewed)), "b", 60*time.Second, "")
	if !errors.Is(err, rooms.ErrCapacity) || counted.lists.Load() != 0 || counted.loads.Load() != 2 {
		t.Fatalf("after another process's renewal: %v, %d listings, %d shard reads; want a refusal, 0, 2 (own + the renewed one)",
			err, counted.lists.Load(), counted.loads.Load())
	}
}

// TestActiveCountFollowsOtherProcesses: the running count stays exact across another process's
// activations, renewals and resignations and across expiry.
func TestActiveCountFollowsOtherProcesses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := leasetest.NewFakeClock(time.Now())
	newManager := func() *rooms.Manager {
		m, err := rooms.New(openStore(t, dir), "follow", rooms.WithMaxActiveRooms(3), rooms.WithMaxClockSkew(0), rooms.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m1, m2 := newManager(), newManager()
	const ttl = 10 * time.Second
	lead := func(m *rooms.Manager) (string, rooms.Result) {
		t.Helper()
		room := rooms.NewRoomID()
		res, err := m.Campaign(ctx, room, "c", ttl, "")
		if err != nil || res.Status != rooms.StatusLeader {
			t.Fatalf("campaign: %+v, %v", res, err)
		}
		return room, res
	}
	refused := func(m *rooms.Manager, why string) {
		t.Helper()
		if _, err := m.Campaign(ctx, rooms.NewRoomID(), "c", ttl, ""); !errors.Is(err, rooms.ErrCapacity) {
			t.Fatalf("campaign with 3 rooms active (%s): %v, want a capacity refusal", why, err)
		}
	}
	r1, a1 := lead(m1)
	lead(m1)
	r3, a3 := lead(m2)
	refused(m1, "the third activated by another process")
	if _, err := m2.Resign(ctx, r3, a3.Token); err != nil {
		t.Fatal(err)
	}
	lead(m1) // the other process's resignation freed a place
	refused(m1, "after the resignation and a new activation")

	clock.Advance(ttl / 2)
	if _, err := m2.Renew(ctx, r1, a1.Token, ttl); err != nil { // r1 now outlives the others
		t.Fatal(err)
	}
	clock.Advance(ttl/2 + time.Millisecond)
	lead(m1)
	lead(m1) // two rooms expired: r1 (renewed elsewhere) and these two are active
	refused(m1, "r1 renewed by another process, two new ones")
	refused(m2, "seen from the other process")
}

// newRoomOutside returns a room id that is not in shard.
func newRoomOutside(m *rooms.Manager, shard int) string {
	for {
		if id := rooms.NewRoomID(); m.ShardOf(id) != shard {
			return id
		}
	}
}

// stallingStore is a countingStore whose writes of shard held, once done, wait for release
// before they return: a write whose version is in the table but not yet back in the engine.
type stallingStore struct {
	*countingStore
	held    atomic.Int64
	waiting chan struct{}
	release chan struct{}
}

func (s *stallingStore) UpdateShard(ctx context.Context, key rooms.ShardKey, data []byte, expected lease.Version) (lease.Version, error) {
	ver, err := s.countingStore.UpdateShard(ctx, key, data, expected)
	if int64(key.Index) == s.held.Load() {
		s.waiting <- struct{}{}
		<-s.release
	}
	return ver, err
}

// TestCountSkipsShardsBeingWritten: a shard this process is writing is counted from the
// document being written, not read again although its version in the table has moved — with
// 64 shards in flight under load, such reads were most of an activation's cost — and the count
// still finds the room activated there.
func TestCountSkipsShardsBeingWritten(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const shards, limit = 8, 3
	s := &stallingStore{countingStore: &countingStore{Store: openStore(t, dir)}, waiting: make(chan struct{}, 1), release: make(chan struct{})}
	s.held.Store(-1)
	m, err := rooms.New(s, "writing", rooms.WithShards(shards), rooms.WithMaxActiveRooms(limit), rooms.WithMaxClockSkew(0))
	if err != nil {
		t.Fatal(err)
	}
	roomstest.WriteShards(t, m, 0, 1, 2) // written once and empty again
	s.held.Store(0)
	first := make(chan error, 1)
	go func() {
		_, err := m.Campaign(ctx, roomstest.RoomInShard(m, 0), "a", 30*time.Second, "")
		first <- err
	}()
	select {
	case <-s.waiting:
	case <-time.After(5 * time.Second):
		t.Fatal("the write of shard 0 did not happen within 5 s")
	}
	defer func() {
		close(s.release)
		if err := <-first; err != nil {
			t.Errorf("campaign in shard 0: %v", err)
		}
	}()
	s.reset()
	if _, err := m.Campaign(ctx, roomstest.RoomInShard(m, 1), "b", 30*time.Second, ""); err != nil {
		t.Fatal(err)
	}
	if n := s.loads.Load(); n != 0 {
		t.Errorf("an activation while shard 0's write is in flight read %d shards, want 0 (shard 1 is remembered, shard 0 is being written here)", n)
	}
	if _, err := m.Campaign(ctx, roomstest.RoomInShard(m, 2), "c", 30*time.Second, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Campaign(ctx, roomstest.RoomInShard(m, 3), "d", 30*time.Second, ""); !errors.Is(err, rooms.ErrCapacity) {
		t.Errorf("a fourth room with three active, one still being written: %v, want a capacity refusal", err)
	}
}

// TestCountListsTheDirectoryOnce: the active-room count learns which shards exist from one
// directory listing, then from the version table — a shard another process creates is counted
// without listing the directory again — and forgets a namespace's shards once they are removed.
func TestCountListsTheDirectoryOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	newManager := func(store rooms.Store) *rooms.Manager {
		m, err := rooms.New(store, "listing", rooms.WithShards(8), rooms.WithMaxActiveRooms(3), rooms.WithMaxClockSkew(0))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m, other := newManager(s), newManager(openStore(t, dir))
	for range 2 {
		if _, err := m.Campaign(ctx, rooms.NewRoomID(), "a", 30*time.Second, ""); err != nil {
			t.Fatal(err)
		}
	}
	// The other process creates a shard this one never saw.
	var fresh string
	for {
		fresh = rooms.NewRoomID()
		if versions, _ := s.ShardVersions(ctx, "listing"); versions[m.ShardOf(fresh)] == 0 {
			break
		}
	}
	if _, err := other.Campaign(ctx, fresh, "b", 30*time.Second, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Campaign(ctx, rooms.NewRoomID(), "a", 30*time.Second, ""); !errors.Is(err, rooms.ErrCapacity) {
		t.Fatalf("a fourth room with three active (one in a shard created by another process): %v, want a capacity refusal", err)
	}
	if n := filestore.DirListings(s); n != 1 {
		t.Errorf("the directory was listed %d times, want once", n)
	}
	if err := other.Store().DeleteShards(ctx, "listing"); err != nil {
		t.Fatal(err)
	}
	versions, err := s.ShardVersions(ctx, "listing")
	if err != nil {
		t.Fatal(err)
	}
	if len(versions) != 0 {
		t.Errorf("after another process removed the shards: versions %v, want none", versions)
	}
	if n := filestore.DirListings(s); n != 1 {
		t.Errorf("the directory was listed %d times, want once", n)
	}
}
