package rooms

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// activeIndex is this Manager's view of when the rooms of every shard end, for the active-room
// count: a running count per namespace that costs no scan of every shard. The Manager's own
// writes keep it current (so the count is exact within the process); before counting, a
// refresh compares the store's shard versions with the index and reads only the shards that
// changed — other processes' activations, renewals and resignations — on every count on
// stores with an activation lock, else when the last refresh is older than the maximum age.
type activeIndex struct {
	mu       sync.Mutex
	listedAt time.Duration // Clock.Monotonic of the last listing
	listed   bool
	shards   map[int]indexedShard
}

type indexedShard struct {
	ver  lease.Version
	ends []time.Time // expires_at + max clock skew of every room of the shard
}

// record keeps the state of a shard the Manager read or wrote at ver, unless the index already
// holds a later version (a listing taken while the write was in flight).
func (x *activeIndex) record(index int, ver lease.Version, ends []time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.shards == nil {
		x.shards = map[int]indexedShard{}
	}
	if cur, ok := x.shards[index]; ok && cur.ver > ver {
		return
	}
	x.shards[index] = indexedShard{ver: ver, ends: ends}
}

func (m *Manager) ends(doc *shardDoc) []time.Time {
	out := make([]time.Time, 0, len(doc.Rooms))
	for _, e := range doc.Rooms {
		out = append(out, e.expiresAt().Add(m.skew))
	}
	return out
}

// countOthers counts the live rooms of every shard but index. Stores that lock activations
// across processes refresh the index on every count (the lock is what makes the count exact
// there); others when the last refresh is older than the maximum count age.
func (m *Manager) countOthers(ctx context.Context, index int, now time.Time) (*capacity, error) {
	_, locks := m.store.(ActivationLocker)
	x := &m.index
	x.mu.Lock()
	fresh := x.listed && !locks && m.clock.Monotonic()-x.listedAt < m.countMaxAge
	x.mu.Unlock()
	if !fresh {
		if err := m.refresh(ctx, index); err != nil {
			return nil, fmt.Errorf("count active rooms: %w", err)
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	c := &capacity{}
	for i, s := range x.shards {
		if i == index {
			continue
		}
		for _, end := range s.ends {
			if now.Before(end) {
				c.active++
				if c.firstEnd.IsZero() || end.Before(c.firstEnd) {
					c.firstEnd = end
				}
			}
		}
	}
	return c, nil
}

// refresh brings the index up to the store's shards, skipping shard skip (the caller counts it
// from its own document). Only shards whose version changed since the index saw them are
// decoded — and, on stores that list versions alone (ShardVersionLister), read — so that a
// count costs about one shard read however many rooms are active, while the other shards stay
// unchanged.
func (m *Manager) refresh(ctx context.Context, skip int) error {
	started := m.clock.Monotonic()
	x := &m.index
	x.mu.Lock()
	known := make(map[int]lease.Version, len(x.shards))
	for i, s := range x.shards {
		known[i] = s.ver
	}
	x.mu.Unlock()
	changed := func(i int, ver lease.Version) bool {
		v, ok := known[i]
		return i != skip && (!ok || v != ver)
	}

	fresh := map[int]indexedShard{}
	if lister, ok := m.store.(ShardVersionLister); ok {
		versions, err := lister.ShardVersions(ctx, m.ns)
		if err != nil {
			return err
		}
		for i, ver := range versions {
			if !changed(i, ver) {
				continue
			}
			doc, ver, err := m.load(ctx, ShardKey{Namespace: m.ns, Index: i})
			if err != nil {
				return err
			}
			if ver != 0 { // 0: removed since the listing
				fresh[i] = indexedShard{ver: ver, ends: m.ends(doc)}
			}
		}
		x.merge(versions, fresh, started)
		return nil
	}
	shards, err := m.store.ListShards(ctx, m.ns)
	if err != nil {
		return err
	}
	versions := make(map[int]lease.Version, len(shards))
	for _, s := range shards {
		versions[s.Index] = s.Version
		if !changed(s.Index, s.Version) {
			continue
		}
		doc, err := decodeShard(s.Data, ShardKey{Namespace: m.ns, Index: s.Index}, m.shards, m.where(s.Index))
		if err != nil {
			return err
		}
		fresh[s.Index] = indexedShard{ver: s.Version, ends: m.ends(doc)}
	}
	x.merge(versions, fresh, started)
	return nil
}

// merge installs a refresh taken at started: the shards listed in versions, with the documents
// read into fresh; the others are gone. What this Manager wrote after the refresh was taken (a
// later version) is kept.
func (x *activeIndex) merge(versions map[int]lease.Version, fresh map[int]indexedShard, started time.Duration) {
	x.mu.Lock()
	defer x.mu.Unlock()
	next := make(map[int]indexedShard, len(versions))
	for i := range versions {
		cur, have := x.shards[i]
		f, read := fresh[i]
		switch {
		case have && (!read || cur.ver > f.ver): // unchanged, or written here since
			next[i] = cur
		case read:
			next[i] = f
		}
	}
	x.shards, x.listed, x.listedAt = next, true, started
}
