package rooms

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// docLayout keeps every shard as one document (the memory, file and Swarm stores): a batch
// decides on the whole shard — the document this Manager wrote last, or one read — and writes
// it whole, conditional on its version. The other shards' active rooms are counted from an
// index of their documents (count.go), under the store's activation lock if it has one (gate.go).
type docLayout struct {
	*Manager
	// mem is the store when it is a *MemoryStore: documents go to it and come back as they
	// are, never encoded or decoded (memory.go). A wrapper of one is a Store like any other.
	mem     *MemoryStore
	locker  ActivationLocker // nil when the store has no activation lock
	reader  ShardVersionReader
	lister  ShardVersionLister
	gate    activationGate
	index   activeIndex
	byShard []docShard
}

// docShard is a shard's state in a docLayout; only the holder of its queue touches it.
type docShard struct {
	// The last document this Manager wrote and its version.
	cached    *shardDoc
	cachedVer lease.Version
	// The document the batch's attempt decides on (a copy: base may be shared), its version,
	// and whether it is the cached one.
	base       *shardDoc
	ver        lease.Version
	fromMemory bool
	// pass is the batch's hold on the activation gate, let go once: when the activating write
	// is visible to other counts (WrittenVisible), or at the end; spare is the one reused on
	// the memory store, which never keeps it.
	pass  *gatePass
	spare gatePass
}

func newDocLayout(m *Manager) *docLayout {
	d := &docLayout{Manager: m, gate: activationGate{sem: make(chan struct{}, 1)}, byShard: make([]docShard, m.shards)}
	d.mem, _ = m.store.(*MemoryStore)
	d.locker, _ = m.store.(ActivationLocker)
	d.reader, _ = m.store.(ShardVersionReader)
	d.lister, _ = m.store.(ShardVersionLister)
	d.index.shards = make([]indexedShard, m.shards)
	return d
}

func (d *docLayout) load(ctx context.Context, key ShardKey, _ []string) (*shardDoc, error) {
	doc, _, err := d.loadShard(ctx, key)
	return doc, err
}

func (d *docLayout) notify(ctx context.Context, key ShardKey, _ string) (<-chan struct{}, error) {
	if n, ok := d.store.(ShardNotifier); ok {
		return n.NotifyShard(ctx, key)
	}
	return nil, ErrNoNotifier
}

func (d *docLayout) begin(key ShardKey, _ []*op) {
	s := &d.byShard[key.Index]
	s.base, s.ver, s.fromMemory = s.cached, s.cachedVer, s.cached != nil
}

func (d *docLayout) read(ctx context.Context, key ShardKey, _ time.Time) (_ *shardDoc, err error) {
	s := &d.byShard[key.Index]
	if s.base == nil {
		if s.base, s.ver, err = d.loadShard(ctx, key); err != nil {
			return nil, err
		}
	}
	return s.base.clone(), nil
}

// decide counts the other shards' live rooms when the batch may activate a room — after
// entering the activation gate and refreshing the index, then under the Manager's decision
// lock — and a batch that will write announces its document to the index (begin) before
// letting the lock go, so that the next activation of this Manager counts it.
func (d *docLayout) decide(ctx context.Context, key ShardKey, batch []*op, doc *shardDoc, now time.Time) (bool, error) {
	s := &d.byShard[key.Index]
	var caps *capacity
	if d.maxActive > 0 && d.mayActivate(batch, doc, now) {
		if s.pass == nil {
			p := &s.spare
			if d.mem == nil { // the store may keep it in the write's context
				p = new(gatePass)
			}
			if err := d.enterActivations(ctx, p); err != nil {
				return false, err
			}
			s.pass = p
		}
		if err := d.refreshCount(ctx, key.Index); err != nil {
			return false, err
		}
		d.deciding.Lock()
		defer d.deciding.Unlock()
		c := d.index.countOthers(key.Index, now, d.skew)
		caps = &c
	}
	changed, refused, _ := d.applyAll(batch, doc, now, caps)
	if s.fromMemory && refused {
		// Refusals are only ever decided on what the store holds now.
		s.base, s.fromMemory = nil, false
		return false, errDecideOnRead
	}
	if changed {
		d.index.begin(key.Index, doc)
	}
	return changed, nil
}

func (d *docLayout) write(ctx context.Context, key ShardKey, doc *shardDoc) (bool, error) {
	s := &d.byShard[key.Index]
	var data []byte
	wctx := ctx
	if d.mem == nil { // the memory store takes the document itself, and never calls WrittenVisible
		data = doc.encode()
		doc.setSize(len(data))
		if s.pass != nil {
			wctx = withVisible(ctx, s.pass.leave)
		}
	}
	ver, maybe, err := d.writeDoc(wctx, key, doc, data, s.ver)
	if err != nil {
		d.index.abort(key.Index)
		s.base, s.fromMemory = nil, false
		if s.pass != nil && s.pass.gone() {
			// The gate went with a write that then failed to be confirmed: count again after
			// entering it anew.
			s.pass = nil
		}
		return maybe, err
	}
	s.cached, s.cachedVer = doc, ver
	if ver == 0 { // applied, version unknown: read before the next write
		s.cached = nil
	}
	d.index.record(key.Index, ver)
	return false, nil
}

func (d *docLayout) forget(key ShardKey) { d.byShard[key.Index].cached = nil }

func (d *docLayout) end(key ShardKey) {
	s := &d.byShard[key.Index]
	if s.pass != nil {
		s.pass.leave()
	}
	s.base, s.pass = nil, nil
}

// loadShard reads and decodes a shard; a missing shard is a new, empty one at version 0 (never
// written: the first write creates it). The document it returns may be shared (the memory
// store's): it is never changed, only cloned.
func (d *docLayout) loadShard(ctx context.Context, key ShardKey) (*shardDoc, lease.Version, error) {
	var doc *shardDoc
	var data []byte
	var ver lease.Version
	var err error
	if d.mem != nil {
		doc, data, ver, err = d.mem.loadDoc(key)
	} else {
		data, ver, err = d.store.LoadShard(ctx, key)
	}
	switch {
	case errors.Is(err, lease.ErrNotFound):
		return newShard(key, d.shards, d.clock.Now()), 0, nil
	case err != nil:
		return nil, 0, err
	case doc != nil:
		// Written by a Manager, maybe one configured otherwise.
		err = checkShardHeader(doc, key, d.shards)
	default:
		doc, err = decodeShard(data, key, d.shards)
	}
	if err != nil {
		return nil, 0, d.placed(err, key.Index)
	}
	return doc, ver, nil
}

// writeDoc writes doc, encoded as data, conditionally on ver (creating the shard when ver is 0);
// the memory store takes doc itself, and data is nil then. Its outcome is settled: an unknown
// one is read back, and the write landed if the shard holds data.
func (d *docLayout) writeDoc(ctx context.Context, key ShardKey, doc *shardDoc, data []byte, ver lease.Version) (newVer lease.Version, maybe bool, err error) {
	switch {
	case d.mem != nil:
		newVer, err = d.mem.storeDoc(key, doc, ver)
	case ver == 0:
		newVer, err = d.store.CreateShard(ctx, key, data)
	default:
		newVer, err = d.store.UpdateShard(ctx, key, data, ver)
	}
	return settle(ctx, newVer, err, func(ctx context.Context) (bool, lease.Version, error) {
		cur, curVer, err := d.store.LoadShard(ctx, key)
		if errors.Is(err, lease.ErrNotFound) {
			return false, 0, nil
		}
		return err == nil && bytes.Equal(cur, data), curVer, err
	})
}
