package rooms

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// MemoryStore is an in-process Store, for tests and single-process demos. Its state dies with
// the process: a new MemoryStore is a store whose shards were all removed, and terms continue
// above the old ones only by the time-based floor of new shards (docs/rooms.md).
//
// A Manager on a MemoryStore (not on a wrapper of one) hands it the documents it writes and
// reads them back as they are (loadDoc, storeDoc): the store encodes a document only when its
// bytes are asked for (LoadShard, ListShards), and the Manager never decodes one. Such a
// document is never changed once stored: the Manager changes a copy.
type MemoryStore struct {
	mu     sync.Mutex
	shards map[ShardKey]memShard
	// next is shared by all shards so that a shard removed and created again never repeats a
	// version.
	next lease.Version
	// versions holds the shards' versions by namespace and index as well, so that
	// ReadShardVersions is a copy.
	versions map[string]*memVersions
	locks    map[string]*memLock
	watchers map[ShardKey]map[chan struct{}]struct{}
}

// memShard is one stored shard: written as bytes (CreateShard, UpdateShard) or as a document
// by a Manager (storeDoc), whose bytes are encoded once, when first asked for.
type memShard struct {
	data []byte
	doc  *shardDoc
	ver  lease.Version
}

// memLock is a namespace's activation lock; unlock is made once, not for every lock taken.
type memLock struct {
	ch     chan struct{}
	unlock func()
}

// memVersions is the versions of a namespace's shards by index (0: none).
type memVersions struct {
	byIndex [MaxShards]lease.Version
	// outside counts the stored shards at indexes outside byIndex, which no Manager uses.
	outside int
}

var (
	_ Store              = (*MemoryStore)(nil)
	_ ActivationLocker   = (*MemoryStore)(nil)
	_ ShardNotifier      = (*MemoryStore)(nil)
	_ ShardVersionLister = (*MemoryStore)(nil)
	_ ShardVersionReader = (*MemoryStore)(nil)
)

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{shards: map[ShardKey]memShard{}, versions: map[string]*memVersions{}, locks: map[string]*memLock{},
		watchers: map[ShardKey]map[chan struct{}]struct{}{}}
}

// Describe implements Store.
func (s *MemoryStore) Describe() string { return "memory store" }

// LoadShard implements Store.
func (s *MemoryStore) LoadShard(_ context.Context, key ShardKey) ([]byte, lease.Version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh, ok := s.shards[key]
	if !ok {
		return nil, 0, s.missing(key)
	}
	return bytes.Clone(s.dataLocked(key, sh)), sh.ver, nil
}

// loadDoc is LoadShard for a Manager: the stored document itself, or the stored bytes when the
// shard was written as bytes (doc is nil then).
func (s *MemoryStore) loadDoc(key ShardKey) (doc *shardDoc, data []byte, ver lease.Version, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh, ok := s.shards[key]
	if !ok {
		return nil, nil, 0, s.missing(key)
	}
	return sh.doc, sh.data, sh.ver, nil
}

// CreateShard implements Store.
func (s *MemoryStore) CreateShard(_ context.Context, key ShardKey, data []byte) (lease.Version, error) {
	return s.write(key, true, 0, memShard{data: bytes.Clone(data)})
}

// UpdateShard implements Store.
func (s *MemoryStore) UpdateShard(_ context.Context, key ShardKey, data []byte, expected lease.Version) (lease.Version, error) {
	return s.write(key, false, expected, memShard{data: bytes.Clone(data)})
}

// storeDoc is CreateShard (expected 0) or UpdateShard for a Manager, which hands over doc: it
// must never change it afterwards.
func (s *MemoryStore) storeDoc(key ShardKey, doc *shardDoc, expected lease.Version) (lease.Version, error) {
	return s.write(key, expected == 0, expected, memShard{doc: doc})
}

// write stores sh as shard key: a new shard (create), or one whose version is expected; the
// errors of CreateShard and UpdateShard.
func (s *MemoryStore) write(key ShardKey, create bool, expected lease.Version, sh memShard) (lease.Version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.shards[key]
	switch {
	case create && ok:
		return 0, fmt.Errorf("memory store: rooms shard %d of %q: %w", key.Index, key.Namespace, lease.ErrExists)
	case !create && !ok:
		return 0, s.missing(key)
	case !create && cur.ver != expected:
		return 0, fmt.Errorf("memory store: rooms shard %d of %q: version %d, expected %d: %w", key.Index, key.Namespace, cur.ver, expected, lease.ErrConflict)
	}
	s.next++
	sh.ver = s.next
	s.setVersion(key, sh.ver)
	s.shards[key] = sh
	s.notifyLocked(key)
	return sh.ver, nil
}

func (s *MemoryStore) missing(key ShardKey) error {
	return fmt.Errorf("memory store: rooms shard %d of %q: %w", key.Index, key.Namespace, lease.ErrNotFound)
}

// dataLocked returns the bytes of shard key, encoding its document the first time.
func (s *MemoryStore) dataLocked(key ShardKey, sh memShard) []byte {
	if sh.doc != nil && sh.data == nil {
		sh.data = sh.doc.encode()
		s.shards[key] = sh
	}
	return sh.data
}

// ListShards implements Store.
func (s *MemoryStore) ListShards(_ context.Context, namespace string) ([]Shard, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Shard
	for k, sh := range s.shards {
		if k.Namespace == namespace {
			out = append(out, Shard{Index: k.Index, Data: bytes.Clone(s.dataLocked(k, sh)), Version: sh.ver})
		}
	}
	return out, nil
}

// ShardVersions implements ShardVersionLister.
func (s *MemoryStore) ShardVersions(_ context.Context, namespace string) (map[int]lease.Version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int]lease.Version{}
	for k, sh := range s.shards {
		if k.Namespace == namespace {
			out[k.Index] = sh.ver
		}
	}
	return out, nil
}

// ReadShardVersions implements ShardVersionReader.
func (s *MemoryStore) ReadShardVersions(_ context.Context, namespace string, versions *[MaxShards]lease.Version) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.versions[namespace]
	switch {
	case v == nil:
		*versions = [MaxShards]lease.Version{}
	case v.outside > 0:
		return fmt.Errorf("memory store: rooms namespace %q has a shard at an index below 0 or from %d on", namespace, MaxShards)
	default:
		*versions = v.byIndex
	}
	return nil
}

// setVersion records shard key's version, 0 when it is removed; the shard's entry is not
// changed yet.
func (s *MemoryStore) setVersion(key ShardKey, ver lease.Version) {
	v := s.versions[key.Namespace]
	if v == nil {
		v = &memVersions{}
		s.versions[key.Namespace] = v
	}
	if key.Index < 0 || key.Index >= MaxShards {
		if ver == 0 {
			v.outside--
		} else if _, ok := s.shards[key]; !ok {
			v.outside++
		}
		return
	}
	v.byIndex[key.Index] = ver
}

// DeleteShards implements Store.
func (s *MemoryStore) DeleteShards(_ context.Context, namespace string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.shards {
		if k.Namespace == namespace {
			s.setVersion(k, 0)
			delete(s.shards, k)
			s.notifyLocked(k)
		}
	}
	return nil
}

// LockActivations implements ActivationLocker with one lock per namespace, shared by every
// Manager using this store.
func (s *MemoryStore) LockActivations(ctx context.Context, namespace string) (func(), error) {
	s.mu.Lock()
	l, ok := s.locks[namespace]
	if !ok {
		ch := make(chan struct{}, 1)
		l = &memLock{ch: ch, unlock: func() { <-ch }}
		s.locks[namespace] = l
	}
	s.mu.Unlock()
	select {
	case l.ch <- struct{}{}:
		return l.unlock, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// NotifyShard implements ShardNotifier: every write to the shard notifies.
func (s *MemoryStore) NotifyShard(ctx context.Context, key ShardKey) (<-chan struct{}, error) {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	if s.watchers[key] == nil {
		s.watchers[key] = map[chan struct{}]struct{}{}
	}
	s.watchers[key][ch] = struct{}{}
	s.mu.Unlock()
	go func() {
		<-ctx.Done()
		s.mu.Lock()
		delete(s.watchers[key], ch)
		s.mu.Unlock()
		close(ch)
	}()
	return ch, nil
}

func (s *MemoryStore) notifyLocked(key ShardKey) {
	for ch := range s.watchers[key] {
		lease.Signal(ch)
	}
}
