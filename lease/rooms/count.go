package rooms

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// activeIndex is this Manager's view of when the rooms of every shard end, for the active-room
// count. A listing of all shards fills it; the Manager's own writes keep it current in between
// (so the count is exact within the process), and a listing older than the maximum age is
// taken again before counting (to see other processes' activations).
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
// across processes are listed on every count (the lock is what makes the count exact there);
// others are listed when the last listing is older than the maximum count age.
func (m *Manager) countOthers(ctx context.Context, index int, now time.Time) (*capacity, error) {
	_, locks := m.store.(ActivationLocker)
	x := &m.index
	x.mu.Lock()
	fresh := x.listed && !locks && m.clock.Monotonic()-x.listedAt < m.countMaxAge
	x.mu.Unlock()
	if !fresh {
		if err := m.list(ctx); err != nil {
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

// list reads every shard of the namespace (one call on every store) into the index.
func (m *Manager) list(ctx context.Context) error {
	started := m.clock.Monotonic()
	shards, err := m.store.ListShards(ctx, m.ns)
	if err != nil {
		return err
	}
	fresh := make(map[int]indexedShard, len(shards))
	for _, s := range shards {
		doc, err := decodeShard(s.Data, ShardKey{Namespace: m.ns, Index: s.Index}, m.shards, m.where(s.Index))
		if err != nil {
			return err
		}
		fresh[s.Index] = indexedShard{ver: s.Version, ends: m.ends(doc)}
	}
	x := &m.index
	x.mu.Lock()
	defer x.mu.Unlock()
	// Keep what this Manager wrote after the listing was taken (a later version); drop shards
	// that are gone.
	for i, cur := range x.shards {
		if f, ok := fresh[i]; ok && cur.ver > f.ver {
			fresh[i] = cur
		}
	}
	x.shards, x.listed, x.listedAt = fresh, true, started
	return nil
}
