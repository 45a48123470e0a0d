package filestore

import (
	"sync"
	"sync/atomic"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// shardSet is which shards of each namespace this Store knows to have slot files, so that the
// active-room count (ShardVersions) never lists the directory on its way: the directory is
// listed once per namespace, and from then on a shard is known by its entry in the version table
// (versions.go), which every writer sets before its first slot write. A known shard whose entry
// is 0 — written before the table existed, or removed (DeleteShards clears its entry) — is
// checked by its slots' header lines, and forgotten when neither slot exists.
type shardSet struct {
	mu     sync.Mutex
	byNS   map[string]*[rooms.MaxShards]bool
	listed atomic.Uint64 // directory listings, for tests
}

// known returns the shards of namespace known to exist, listing the directory the first time.
func (s *Store) knownShards(namespace string) ([rooms.MaxShards]bool, error) {
	c := &s.shardSet
	c.mu.Lock()
	defer c.mu.Unlock()
	if set, ok := c.byNS[namespace]; ok {
		return *set, nil
	}
	indexes, err := s.shardIndexes(namespace)
	if err != nil {
		return [rooms.MaxShards]bool{}, err
	}
	c.listed.Add(1)
	set := new([rooms.MaxShards]bool)
	for _, i := range indexes {
		set[i] = true
	}
	if c.byNS == nil {
		c.byNS = map[string]*[rooms.MaxShards]bool{}
	}
	c.byNS[namespace] = set
	return *set, nil
}

// forgetShard records that shard key has no slot file any more.
func (s *Store) forgetShard(key rooms.ShardKey) {
	c := &s.shardSet
	c.mu.Lock()
	defer c.mu.Unlock()
	if set, ok := c.byNS[key.Namespace]; ok {
		set[key.Index] = false
	}
}

// forgetAll forgets every namespace's shards (their files are gone: dir.go), so that the next
// count lists the directory again.
func (s *shardSet) forgetAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.byNS)
}
