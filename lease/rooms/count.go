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
// writes keep it current (so the count is exact within the process): a write announces the
// document it is writing (begin) before it starts, and the count takes, for such a shard, the
// larger of the rooms live in the stored and in the written document — the store holds one or
// the other at any instant. Before counting, a refresh compares the store's shard versions with
// the index and reads only the shards that changed and are not being written here — other
// processes' activations, renewals and resignations — on every count on stores with an
// activation lock, else when the last refresh is older than the maximum age.
type activeIndex struct {
	mu       sync.Mutex
	listedAt time.Duration // Clock.Monotonic of the last listing
	listed   bool
	shards   map[int]indexedShard
	// writing holds the rooms' ends of the document each shard's write in flight is writing:
	// one write per shard at a time (the shard queue's holder).
	writing map[int][]time.Time
	// recorded numbers the index's changes, so that a refresh keeps what was recorded after
	// it began.
	recorded uint64
}

type indexedShard struct {
	ver  lease.Version
	ends []time.Time // expires_at + max clock skew of every room of the shard
	seq  uint64      // activeIndex.recorded when it was recorded
}

// begin announces that this Manager is writing a document whose rooms end at ends to shard
// index; record or abort ends it.
func (x *activeIndex) begin(index int, ends []time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.writing == nil {
		x.writing = map[int][]time.Time{}
	}
	x.writing[index] = ends
}

// abort ends a write that failed: the index keeps the shard's last known state, and the next
// refresh reads the shard if its version moved (a write that may have landed).
func (x *activeIndex) abort(index int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.writing, index)
}

// record keeps the state of a shard the Manager read or wrote at ver, unless the index already
// holds a later version (a listing taken while the write was in flight), and ends the shard's
// write. Version 0 (a write applied whose version is unknown) replaces the entry, so that the
// next refresh reads the shard.
func (x *activeIndex) record(index int, ver lease.Version, ends []time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.writing, index)
	if x.shards == nil {
		x.shards = map[int]indexedShard{}
	}
	if cur, ok := x.shards[index]; ok && ver != 0 && cur.ver > ver {
		return
	}
	x.recorded++
	x.shards[index] = indexedShard{ver: ver, ends: ends, seq: x.recorded}
}

func (m *Manager) ends(doc *shardDoc) []time.Time {
	out := make([]time.Time, 0, len(doc.Rooms))
	for _, e := range doc.Rooms {
		out = append(out, e.expiresAt().Add(m.skew))
	}
	return out
}

// refreshCount brings the index up to date for a count: on stores that lock activations across
// processes on every count (the lock is what makes the count exact there), on others when the
// last refresh is older than the maximum count age.
func (m *Manager) refreshCount(ctx context.Context, skip int) error {
	_, locks := m.store.(ActivationLocker)
	x := &m.index
	x.mu.Lock()
	fresh := x.listed && !locks && m.clock.Monotonic()-x.listedAt < m.countMaxAge
	x.mu.Unlock()
	if fresh {
		return nil
	}
	if err := m.refresh(ctx, skip); err != nil {
		return fmt.Errorf("count active rooms: %w", err)
	}
	return nil
}

// countOthers counts the live rooms of every shard but index, from the index as it stands: the
// caller refreshed it (refreshCount) and holds the Manager's decision lock, so that no other
// activation of this Manager is decided between the count and the begin of its write.
func (x *activeIndex) countOthers(index int, now time.Time) *capacity {
	x.mu.Lock()
	defer x.mu.Unlock()
	c := &capacity{}
	for i, s := range x.shards {
		if i == index {
			continue
		}
		n, first := liveEnds(s.ends, now)
		if w, ok := x.writing[i]; ok {
			wn, wfirst := liveEnds(w, now)
			n, first = max(n, wn), earlier(first, wfirst)
		}
		c.active, c.firstEnd = c.active+n, earlier(c.firstEnd, first)
	}
	for i, w := range x.writing {
		if _, ok := x.shards[i]; !ok && i != index { // a shard this Manager is creating
			n, first := liveEnds(w, now)
			c.active, c.firstEnd = c.active+n, earlier(c.firstEnd, first)
		}
	}
	return c
}

// liveEnds returns how many of ends are after now, and the first of those.
func liveEnds(ends []time.Time, now time.Time) (n int, first time.Time) {
	for _, end := range ends {
		if now.Before(end) {
			n, first = n+1, earlier(first, end)
		}
	}
	return n, first
}

// earlier returns the earlier of two times, the zero time standing for none.
func earlier(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// refresh brings the index up to the store's shards, skipping shard skip (the caller counts it
// from its own document) and the shards this Manager is writing (counted from the written
// document until the write ends). Only shards whose version changed since the index saw them are
// decoded — and, on stores that list versions alone (ShardVersionLister), read — so that a
// count costs about one shard read however many rooms are active, while the other shards stay
// unchanged.
func (m *Manager) refresh(ctx context.Context, skip int) error {
	started := m.clock.Monotonic()
	x := &m.index
	x.mu.Lock()
	since := x.recorded
	x.mu.Unlock()
	// changed picks, among the listed versions, the shards to read: those neither skipped,
	// being written here, nor already known at that version.
	changed := func(versions map[int]lease.Version) map[int]bool {
		x.mu.Lock()
		defer x.mu.Unlock()
		out := map[int]bool{}
		for i, ver := range versions {
			_, writing := x.writing[i]
			if s, ok := x.shards[i]; i != skip && !writing && (!ok || s.ver != ver) {
				out[i] = true
			}
		}
		return out
	}

	fresh := map[int]indexedShard{}
	if lister, ok := m.store.(ShardVersionLister); ok {
		versions, err := lister.ShardVersions(ctx, m.ns)
		if err != nil {
			return err
		}
		for i := range changed(versions) {
			doc, ver, err := m.load(ctx, ShardKey{Namespace: m.ns, Index: i})
			if err != nil {
				return err
			}
			if ver != 0 { // 0: removed since the listing
				fresh[i] = indexedShard{ver: ver, ends: m.ends(doc)}
			}
		}
		x.merge(versions, fresh, started, since)
		return nil
	}
	shards, err := m.store.ListShards(ctx, m.ns)
	if err != nil {
		return err
	}
	versions := make(map[int]lease.Version, len(shards))
	for _, s := range shards {
		versions[s.Index] = s.Version
	}
	read := changed(versions)
	for _, s := range shards {
		if !read[s.Index] {
			continue
		}
		doc, err := decodeShard(s.Data, ShardKey{Namespace: m.ns, Index: s.Index}, m.shards, m.where(s.Index))
		if err != nil {
			return err
		}
		fresh[s.Index] = indexedShard{ver: s.Version, ends: m.ends(doc)}
	}
	x.merge(versions, fresh, started, since)
	return nil
}

// merge installs a refresh taken at started, when the index's record count was since: the
// shards listed in versions, with the documents read into fresh; the others are gone. What this
// Manager recorded after the refresh began (a later version, or a shard it created) is kept. It
// changes the index in place: on most refreshes nothing changed.
func (x *activeIndex) merge(versions map[int]lease.Version, fresh map[int]indexedShard, started time.Duration, since uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.shards == nil {
		x.shards = map[int]indexedShard{}
	}
	for i, f := range fresh {
		if cur, have := x.shards[i]; !have || cur.ver <= f.ver { // else written here since
			x.shards[i] = f
		}
	}
	for i, cur := range x.shards {
		if _, listed := versions[i]; !listed && cur.seq <= since { // gone, and not created here since
			delete(x.shards, i)
		}
	}
	x.listed, x.listedAt = true, started
}
