package rooms

import (
	"context"
	"fmt"
	"math"
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
//
// It is an array by shard number, not a map: a count and a refresh walk every shard on every
// activation, and maps made them a fifth of the engine's work per operation. It refers to the
// documents themselves, which are never changed once written or read (a write changes a
// copy), and sums up a document's rooms only when a count first needs it: most documents
// written (renewals) are replaced before any count looks at them.
type activeIndex struct {
	mu       sync.Mutex
	listedAt time.Duration // Clock.Monotonic of the last listing
	listed   bool
	// shards holds what the index knows of each shard below the Manager's shard count.
	shards []indexedShard
	// recorded numbers the index's changes, so that a refresh keeps what was recorded after
	// it began.
	recorded uint64
}

type indexedShard struct {
	known  bool // the shard was stored when last read, listed or written
	ver    lease.Version
	stored docEnds
	seq    uint64 // activeIndex.recorded when it was recorded
	// writing tells that this Manager's write to the shard is in flight, of the document
	// written: one write per shard at a time (the shard queue's holder).
	writing bool
	written docEnds
}

// docEnds is a shard document as the count sees it: when its rooms stop counting (expires_at
// plus the maximum clock skew). How many rooms it has and the earliest end are summed up once,
// by the first count: until that end every room counts, and a count walks no rooms. Ends are
// Unix nanoseconds: a count looks at every shard on every activation, and comparing times cost
// it more than the rest of its work.
type docEnds struct {
	doc    *shardDoc // nil: no document
	summed bool
	n      int
	first  int64 // the earliest end; noEnd when there are no rooms
}

// noEnd is the end of no room: after every other.
const noEnd = math.MaxInt64

// liveAt returns how many rooms of the document are live at now (their end is after it), and
// the first of their ends; now and skew in nanoseconds.
func (e *docEnds) liveAt(now, skew int64) (n int, first int64) {
	if e.summed && now < e.first { // every room counts (or there are none)
		return e.n, e.first
	}
	return e.walk(now, skew)
}

// walk is liveAt for a document not summed up yet, or whose first room has ended.
func (e *docEnds) walk(now, skew int64) (n int, first int64) {
	if !e.summed {
		e.first = noEnd
		if e.doc != nil {
			for _, r := range e.doc.Rooms.slots {
				e.first = min(e.first, endNanos(r.entry, skew))
			}
			e.n = e.doc.Rooms.len()
		}
		e.summed = true
		if now < e.first {
			return e.n, e.first
		}
	}
	first = noEnd
	for _, r := range e.doc.Rooms.slots {
		if end := endNanos(r.entry, skew); now < end {
			n, first = n+1, min(first, end)
		}
	}
	return n, first
}

// endNanos is when room e stops counting, in Unix nanoseconds: its expiry plus skew, the moment
// Manager.live turns false. Expiries past the nanoseconds' range (year 2262) end there: after
// any now.
func endNanos(e roomEntry, skew int64) int64 {
	const maxMs = (noEnd - 1) / int64(time.Millisecond)
	if e.ExpiresMs >= maxMs-skew/int64(time.Millisecond)-1 {
		return noEnd - 1
	}
	return max(e.ExpiresMs, math.MinInt64/int64(time.Millisecond)+1)*int64(time.Millisecond) + skew
}

// begin announces that this Manager is writing doc to shard index; record or abort ends it.
// doc must not change afterwards.
func (x *activeIndex) begin(index int, doc *shardDoc) {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := &x.shards[index]
	s.writing, s.written = true, docEnds{doc: doc}
}

// abort ends a write that failed: the index keeps the shard's last known state, and the next
// refresh reads the shard if its version moved (a write that may have landed).
func (x *activeIndex) abort(index int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := &x.shards[index]
	s.writing, s.written = false, docEnds{}
}

// record ends the shard's write, which stored the document announced by begin at ver, and
// keeps it unless the index already holds a later version (a listing taken while the write was
// in flight). Version 0 (a write applied whose version is unknown) replaces the entry, so that
// the next refresh reads the shard.
func (x *activeIndex) record(index int, ver lease.Version) {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := &x.shards[index]
	written := s.written
	s.writing, s.written = false, docEnds{}
	if s.known && ver != 0 && s.ver > ver {
		return
	}
	x.recorded++
	s.known, s.ver, s.stored, s.seq = true, ver, written, x.recorded
}

// refreshCount brings the index up to date for a count: on stores that lock activations across
// processes on every count (the lock is what makes the count exact there), on others when the
// last refresh is older than the maximum count age.
func (d *docLayout) refreshCount(ctx context.Context, skip int) error {
	x := &d.index
	x.mu.Lock()
	fresh := x.listed && d.locker == nil && d.clock.Monotonic()-x.listedAt < d.countMaxAge
	x.mu.Unlock()
	if fresh {
		return nil
	}
	if err := d.refresh(ctx, skip); err != nil {
		return fmt.Errorf("count active rooms: %w", err)
	}
	return nil
}

// countOthers counts the live rooms of every shard but index, from the index as it stands: the
// caller refreshed it (refreshCount) and holds the Manager's decision lock, so that no other
// activation of this Manager is decided between the count and the begin of its write.
func (x *activeIndex) countOthers(index int, now time.Time, skew time.Duration) capacity {
	at, sk := now.UnixNano(), skew.Nanoseconds()
	x.mu.Lock()
	defer x.mu.Unlock()
	active, firstEnd := 0, int64(noEnd)
	for i := range x.shards {
		s := &x.shards[i]
		if i == index || !(s.known || s.writing) {
			continue
		}
		n, first := 0, int64(noEnd)
		if s.known {
			n, first = s.stored.liveAt(at, sk)
		}
		if s.writing {
			wn, wfirst := s.written.liveAt(at, sk)
			n, first = max(n, wn), min(first, wfirst)
		}
		active, firstEnd = active+n, min(firstEnd, first)
	}
	c := capacity{active: active}
	if firstEnd != noEnd {
		c.firstEnd = time.Unix(0, firstEnd)
	}
	return c
}

// shardListing is one refresh's view of the store: the versions of the namespace's shards by
// index, and the shards it read again. Listings are reused (listings): a refresh runs on every
// activation, and a kilobyte-sized array on the stack made the request's goroutine grow its
// stack.
type shardListing struct {
	versions [MaxShards]lease.Version
	// listed tells which shards the store holds: a version of 0 is none, except from a
	// ShardVersionLister, which may list any value for a stored shard.
	listed [MaxShards]bool
	// outside holds the shards the store listed at indexes no Manager uses (< 0, ≥ MaxShards).
	outside []int
	read    []int
	fresh   []freshShard
}

type freshShard struct {
	index int
	ver   lease.Version
	doc   *shardDoc
}

var listings = sync.Pool{New: func() any { return new(shardListing) }}

// refresh brings the index up to the store's shards, skipping shard skip (the caller counts it
// from its own document) and the shards this Manager is writing (counted from the written
// document until the write ends). Only shards whose version changed since the index saw them are
// decoded — and, on stores that list versions alone (ShardVersionReader, ShardVersionLister),
// read — so that a count costs about one shard read however many rooms are active, while the
// other shards stay unchanged.
func (d *docLayout) refresh(ctx context.Context, skip int) error {
	started := d.clock.Monotonic()
	x := &d.index
	x.mu.Lock()
	since := x.recorded
	x.mu.Unlock()
	l := listings.Get().(*shardListing)
	defer listings.Put(l)
	// Cleared in place: an array literal assigned is a temporary of its size on the stack.
	clear(l.listed[:])
	l.outside, l.read, l.fresh = l.outside[:0], l.read[:0], l.fresh[:0]
	defer func() { clear(l.fresh) }() // the pool must not keep documents alive

	var docs []Shard // from ListShards: the documents come with the listing
	switch {
	case d.reader != nil:
		if err := d.reader.ReadShardVersions(ctx, d.ns, &l.versions); err != nil {
			return err
		}
		for i, v := range &l.versions {
			l.listed[i] = v != 0
		}
	case d.lister != nil:
		versions, err := d.lister.ShardVersions(ctx, d.ns)
		if err != nil {
			return err
		}
		clear(l.versions[:])
		for i, v := range versions {
			l.list(i, v)
		}
	default:
		var err error
		if docs, err = d.store.ListShards(ctx, d.ns); err != nil {
			return err
		}
		clear(l.versions[:])
		for _, s := range docs {
			l.list(s.Index, s.Version)
		}
	}
	d.changedShards(l, skip)
	for _, i := range l.read {
		key := ShardKey{Namespace: d.ns, Index: i}
		var doc *shardDoc
		var ver lease.Version
		var err error
		removed := false
		if docs == nil {
			doc, ver, err = d.loadShard(ctx, key)
			removed = ver == 0 // since the listing: nothing to count
		} else {
			s := listedShard(docs, i)
			ver = s.Version
			if doc, err = decodeShard(s.Data, key, d.shards); err != nil {
				err = d.placed(err, i)
			}
		}
		if err != nil {
			return err
		}
		// A shard at an index past the Manager's shard count decodes only without rooms (its
		// rooms would hash below the count): it has none to count.
		if i < d.shards && !removed {
			l.fresh = append(l.fresh, freshShard{index: i, ver: ver, doc: doc})
		}
	}
	x.merge(l, started, since)
	return nil
}

// list records a listed shard; one at an index no Manager uses is only read (l.outside).
func (l *shardListing) list(i int, v lease.Version) {
	if i < 0 || i >= MaxShards {
		l.outside = append(l.outside, i)
		return
	}
	l.versions[i], l.listed[i] = v, true
}

// listedShard is shard i of a listing of documents.
func listedShard(docs []Shard, i int) Shard {
	for _, s := range docs {
		if s.Index == i {
			return s
		}
	}
	return Shard{}
}

// changedShards picks, among the listed shards, the ones to read into l.read: those neither
// skipped, being written here, nor already known at their version — and every listed shard at
// an index past the Manager's shard count, which is read only to fail the count if it is not
// a shard of this configuration.
func (d *docLayout) changedShards(l *shardListing, skip int) {
	x := &d.index
	x.mu.Lock()
	for i := range x.shards {
		if !l.listed[i] || i == skip {
			continue
		}
		if s := &x.shards[i]; !s.writing && (!s.known || s.ver != l.versions[i]) {
			l.read = append(l.read, i)
		}
	}
	x.mu.Unlock()
	for i := d.shards; i < MaxShards; i++ {
		if l.listed[i] {
			l.read = append(l.read, i)
		}
	}
	l.read = append(l.read, l.outside...)
}

// merge installs a refresh taken at started, when the index's record count was since: the
// shards listed in l, with the documents read into l.fresh; the others are gone. What this
// Manager recorded after the refresh began (a later version, or a shard it created) is kept. It
// changes the index in place: on most refreshes nothing changed.
func (x *activeIndex) merge(l *shardListing, started time.Duration, since uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, f := range l.fresh {
		if s := &x.shards[f.index]; !s.known || s.ver <= f.ver { // else written here since
			s.known, s.ver, s.stored, s.seq = true, f.ver, docEnds{doc: f.doc}, 0
		}
	}
	for i := range x.shards {
		if s := &x.shards[i]; s.known && !l.listed[i] && s.seq <= since { // gone, and not created here since
			s.known, s.ver, s.stored, s.seq = false, 0, docEnds{}, 0
		}
	}
	x.listed, x.listedAt = true, started
}
