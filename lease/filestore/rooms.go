package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// The file store also keeps the shards of the elections API's rooms (package rooms): two slot
// files per shard, <namespace>.rooms-NN.a and .b (slots.go), written under an exclusive flock
// of <namespace>.rooms-NN.lock. Activations of a namespace are
// serialised across processes by a flock of <namespace>.rooms.lock, which makes the active-room
// limit exact on this host.

var (
	_ rooms.Store              = (*Store)(nil)
	_ rooms.ActivationLocker   = (*Store)(nil)
	_ rooms.ShardNotifier      = (*Store)(nil)
	_ rooms.ShardVersionLister = (*Store)(nil)
	_ rooms.ShardVersionReader = (*Store)(nil)
)

// roomsSchema is the version of the shard file's envelope.
const roomsSchema = 1

// roomsFile is the on-disk form of one shard: a versioned envelope around the rooms package's
// JSON document, kept verbatim.
type roomsFile struct {
	Schema  int    `json:"schema"`
	Version uint64 `json:"version"`
	// Previous is the version the other slot held when this one was written; 0 for the
	// shard's first write. It tells a slot that vanished from one never written.
	Previous  uint64          `json:"previous,omitempty"`
	Namespace string          `json:"namespace"`
	Shard     int             `json:"shard"`
	Data      json.RawMessage `json:"data"`
}

func (s *Store) shardLockPath(key rooms.ShardKey) string { return s.shardFile(key, "lock") }

// shardFile returns the path of shard key's file with the given suffix,
// <dir>/<namespace>.rooms-NN.<suffix>: what filepath.Join and "%02d" give for the store's clean,
// absolute directory and a valid namespace, built without fmt and filepath's cleaning pass,
// since a write builds four of them and those cost about 2 % of the server's CPU per request.
func (s *Store) shardFile(key rooms.ShardKey, suffix string) string {
	var digits [24]byte
	name := append(digits[:0], ".rooms-"...)
	if key.Index >= 0 && key.Index < 10 {
		name = append(name, '0')
	}
	name = strconv.AppendInt(name, int64(key.Index), 10)
	name = append(name, '.')
	return s.namespaceFile(key.Namespace, string(name)+suffix)
}

// namespaceFile returns filepath.Join(s.dir, namespace+suffix) for a valid namespace, without
// filepath's cleaning pass: the directory is clean (New), and a valid namespace holds no
// separator.
func (s *Store) namespaceFile(namespace, suffix string) string {
	var b strings.Builder
	b.Grow(len(s.dir) + 1 + len(namespace) + len(suffix))
	b.WriteString(s.dir)
	if !os.IsPathSeparator(s.dir[len(s.dir)-1]) { // the root directory ends in one already
		b.WriteByte(filepath.Separator)
	}
	b.WriteString(namespace)
	b.WriteString(suffix)
	return b.String()
}

// LoadShard implements rooms.Store. It reads without the lock (see slots.go); only when no slot
// is whole — a write may be under way — it reads again under the lock. When the other slot does
// not hold what it must, it reads again under the lock only if the lock is free (so that a read
// never waits for a write): then no write is in progress, and the slot is reported as damaged.
func (s *Store) LoadShard(_ context.Context, key rooms.ShardKey) ([]byte, lease.Version, error) {
	if err := s.namespaces.validate(key.Namespace); err != nil {
		return nil, 0, err
	}
	r, err := s.readSlots(key)
	switch {
	case errors.Is(err, errTornShard):
		err = s.lockedPath(s.shardLockPath(key), func() error {
			r, err = s.readSlotsLocked(key)
			return err
		})
	case err == nil && r.damage != nil && !s.reportedAlready(*r.damage):
		var again shardRead
		ran, lerr := s.tryLockedPath(s.shardLockPath(key), func() error {
			var rerr error
			again, rerr = s.readSlotsLocked(key)
			return rerr
		})
		if lerr != nil {
			return nil, 0, lerr
		}
		if ran {
			r = again
		}
	}
	if err != nil {
		return nil, 0, err
	}
	return r.file.Data, lease.Version(r.file.Version), nil
}

// CreateShard implements rooms.Store.
func (s *Store) CreateShard(_ context.Context, key rooms.ShardKey, data []byte) (lease.Version, error) {
	if err := s.namespaces.validate(key.Namespace); err != nil {
		return 0, err
	}
	var ver lease.Version
	err := s.lockedPath(s.shardLockPath(key), func() error {
		_, err := s.readSlotsLocked(key)
		switch {
		case err == nil:
			return fmt.Errorf("file store: %s: %w", filepath.Base(s.slotPath(key, 0)), lease.ErrExists)
		case !errors.Is(err, lease.ErrNotFound):
			return err
		}
		// A time-based first version keeps versions rising across removal and re-creation.
		ver = nextVersion(0)
		if err := s.announceVersion(key, uint64(ver)); err != nil {
			return err
		}
		s.slots.forget(key)
		if err := s.createSlots(key, data, ver); err != nil {
			return err
		}
		// Readers take the first of two slots of one version (readSlots).
		s.slots.put(key, cachedSlots{at: 0, cur: uint64(ver), other: uint64(ver)})
		return nil
	})
	return ver, err
}

// UpdateShard implements rooms.Store.
func (s *Store) UpdateShard(ctx context.Context, key rooms.ShardKey, data []byte, expected lease.Version) (lease.Version, error) {
	if err := s.namespaces.validate(key.Namespace); err != nil {
		return 0, err
	}
	var ver lease.Version
	err := s.lockedPath(s.shardLockPath(key), func() error {
		r, held, err := s.currentLocked(key)
		if err != nil {
			return err
		}
		defer held.close()
		cur := lease.Version(r.cur)
		if cur != expected {
			return fmt.Errorf("file store: %s: version %d, expected %d: %w", filepath.Base(s.slotPath(key, r.at)), cur, expected, lease.ErrConflict)
		}
		ver = nextVersion(cur)
		if err := s.announceVersion(key, uint64(ver)); err != nil {
			return err
		}
		// Written in place, the slot is what every reader sees before its flush returns.
		visible := func() { rooms.WrittenVisible(ctx) }
		if err := s.writeSlot(key, 1-r.at, held, data, ver, cur, visible); err != nil { // never over the current version
			s.slots.forget(key)
			return err
		}
		s.slots.put(key, cachedSlots{at: 1 - r.at, cur: uint64(ver), other: r.cur})
		return nil
	})
	return ver, err
}

// nextVersion is the version of the write after cur, of a rooms shard or an election record:
// above it and at least the wall clock in Unix nanoseconds. The clock keeps a version from
// being handed out twice when a file loses its newest slot: the next write after the loss
// starts above the lost version, so a reader that remembered it (another process's cache, a
// watcher) sees a change, not the same version with other content.
func nextVersion(cur lease.Version) lease.Version {
	return max(cur+1, lease.Version(max(time.Now().UnixNano(), 0)))
}

// ListShards implements rooms.Store.
func (s *Store) ListShards(ctx context.Context, namespace string) ([]rooms.Shard, error) {
	indexes, err := s.shardIndexes(namespace)
	if err != nil {
		return nil, err
	}
	var out []rooms.Shard
	for _, i := range indexes {
		data, ver, err := s.LoadShard(ctx, rooms.ShardKey{Namespace: namespace, Index: i})
		if errors.Is(err, lease.ErrNotFound) { // removed since the listing
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, rooms.Shard{Index: i, Data: data, Version: ver})
	}
	return out, nil
}

// ShardVersions implements rooms.ShardVersionLister: ReadShardVersions' versions, the shards
// stored by index.
func (s *Store) ShardVersions(ctx context.Context, namespace string) (map[int]lease.Version, error) {
	versions := new([rooms.MaxShards]lease.Version)
	if err := s.ReadShardVersions(ctx, namespace, versions); err != nil {
		return nil, err
	}
	out := map[int]lease.Version{}
	for i, v := range versions {
		if v != 0 {
			out[i] = v
		}
	}
	return out, nil
}

// ReadShardVersions implements rooms.ShardVersionReader from the namespace's version table
// (versions.go) and, for a shard known to exist (shardset.go) that the table does not know, the
// slots' header lines alone: the higher version either header announces; 0 for a shard not
// stored. When that is a write cut short the engine reads the shard and finds the version that
// holds; it never takes an unchanged shard for a changed one's old state, because every write
// raises the version in the header it writes first. It lists the directory only the first time
// it is asked about a namespace, and fills the caller's array rather than a map: the count asks
// on every activation.
func (s *Store) ReadShardVersions(_ context.Context, namespace string, versions *[rooms.MaxShards]lease.Version) error {
	if err := s.namespaces.validate(namespace); err != nil {
		return err
	}
	known, err := s.knownShards(namespace)
	if err != nil {
		return err
	}
	announced := versionTables.Get().(*versionTable)
	defer versionTables.Put(announced)
	if err := s.announcedVersions(namespace, announced); err != nil {
		return err
	}
	for i := range rooms.MaxShards {
		versions[i] = lease.Version(announced.version(i)) // versions.go
		if versions[i] != 0 || !known[i] {
			continue
		}
		s.slots.headerListings.Add(1)
		key := rooms.ShardKey{Namespace: namespace, Index: i}
		var top uint64
		for slot := range slotNames {
			v, err := s.headerVersion(s.slotPath(key, slot))
			if err != nil {
				return err
			}
			top = max(top, v)
		}
		if top == 0 { // neither slot exists (removed)
			s.forgetShard(key)
			continue
		}
		versions[i] = lease.Version(top)
	}
	return nil
}

// shardIndexes lists the shards of namespace that have a slot file.
func (s *Store) shardIndexes(namespace string) ([]int, error) {
	if err := s.namespaces.validate(namespace); err != nil {
		return nil, err
	}
	// A namespace holds no glob metacharacters (ValidateNamespace). Another namespace can match
	// the pattern ("a" matches "a.rooms-x.rooms-01.a"): only names this namespace would give
	// count.
	paths, err := filepath.Glob(filepath.Join(s.dir, namespace+".rooms-*.[ab]"))
	if err != nil {
		return nil, fmt.Errorf("file store: list shards: %w", err)
	}
	seen := map[int]bool{}
	var out []int
	for _, p := range paths {
		// <namespace>.rooms-NN.a → NN
		number := strings.TrimPrefix(filepath.Base(p), namespace+".rooms-")
		i, err := strconv.Atoi(number[:max(len(number)-len(".a"), 0)])
		if err != nil || seen[i] || i < 0 || i >= rooms.MaxShards {
			continue
		}
		key := rooms.ShardKey{Namespace: namespace, Index: i}
		if p == s.slotPath(key, 0) || p == s.slotPath(key, 1) {
			seen[i] = true
			out = append(out, i)
		}
	}
	return out, nil
}

// DeleteShards implements rooms.Store: it removes both slots of every shard, damaged ones
// too. Lock files stay, as for elections: removing one could let two processes lock two
// different inodes of the same name.
func (s *Store) DeleteShards(_ context.Context, namespace string) error {
	indexes, err := s.shardIndexes(namespace)
	if err != nil || len(indexes) == 0 { // nothing removed: no directory entry to sync
		return err
	}
	for _, i := range indexes {
		key := rooms.ShardKey{Namespace: namespace, Index: i}
		err := s.lockedPath(s.shardLockPath(key), func() error {
			s.slots.forget(key)
			s.forgetShard(key)
			// A cleared entry sends other processes' counts to the slots, which are gone.
			if err := s.announceVersion(key, 0); err != nil {
				return err
			}
			for slot := range slotNames {
				if err := os.Remove(s.slotPath(key, slot)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return storeError("remove", s.slotPath(key, slot), err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return syncDir(s.dir)
}

// LockActivations implements rooms.ActivationLocker with a flock of <namespace>.rooms.lock,
// which every process of the host using this directory honours and the kernel drops when a
// process dies.
func (s *Store) LockActivations(ctx context.Context, namespace string) (func(), error) {
	if err := s.namespaces.validate(namespace); err != nil {
		return nil, err
	}
	path := filepath.Join(s.dir, namespace+".rooms.lock")
	f, err := s.openLock(path)
	if err != nil {
		return nil, err
	}
	release := func() { _ = f.unlock(); f.close() }
	// Mostly nobody holds the lock (a Manager takes it once per burst of activations): take it
	// without waiting, and so without a goroutine.
	if ok, err := f.tryLock(); err != nil {
		f.close()
		return nil, fmt.Errorf("file store: lock %s: %w", path, err)
	} else if ok {
		return release, nil
	}
	// flock(2) cannot be interrupted by a context: wait for the lock in a goroutine, and if the
	// caller gives up first, release the lock as soon as it is taken.
	locked := make(chan error, 1)
	go func() { locked <- f.lock() }()
	select {
	case err := <-locked:
		if err != nil {
			f.close()
			return nil, fmt.Errorf("file store: lock %s: %w", path, err)
		}
		return release, nil
	case <-ctx.Done():
		go func() {
			if <-locked == nil {
				_ = f.unlock()
			}
			f.close()
		}()
		return nil, ctx.Err()
	}
}
