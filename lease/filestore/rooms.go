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

// The file store also keeps the shards of the elections API's rooms (package rooms): one file
// per shard, <namespace>.rooms-NN.json, replaced atomically under an exclusive flock of
// <namespace>.rooms-NN.lock, exactly as an election's file. Activations of a namespace are
// serialised across processes by a flock of <namespace>.rooms.lock, which makes the active-room
// limit exact on this host.

var (
	_ rooms.Store            = (*Store)(nil)
	_ rooms.ActivationLocker = (*Store)(nil)
	_ rooms.ShardNotifier    = (*Store)(nil)
)

// roomsSchema is the version of the shard file's envelope.
const roomsSchema = 1

// roomsFile is the on-disk form of one shard: a versioned envelope around the rooms package's
// JSON document, kept verbatim.
type roomsFile struct {
	Schema    int             `json:"schema"`
	Version   uint64          `json:"version"`
	Namespace string          `json:"namespace"`
	Shard     int             `json:"shard"`
	Data      json.RawMessage `json:"data"`
}

func (s *Store) shardLockPath(key rooms.ShardKey) string {
	return filepath.Join(s.dir, fmt.Sprintf("%s.rooms-%02d.lock", key.Namespace, key.Index))
}

// LoadShard implements rooms.Store. It reads without the lock (see slots.go); only when no slot
// is whole — a write may be under way — it reads again under the lock.
func (s *Store) LoadShard(_ context.Context, key rooms.ShardKey) ([]byte, lease.Version, error) {
	if err := lease.ValidateNamespace(key.Namespace); err != nil {
		return nil, 0, err
	}
	f, _, err := s.readSlots(key)
	if errors.Is(err, errTornShard) {
		err = lockedPath(s.shardLockPath(key), func() error {
			f, _, err = s.readSlotsLocked(key)
			return err
		})
	}
	if err != nil {
		return nil, 0, err
	}
	return f.Data, lease.Version(f.Version), nil
}

// CreateShard implements rooms.Store.
func (s *Store) CreateShard(_ context.Context, key rooms.ShardKey, data []byte) (lease.Version, error) {
	if err := lease.ValidateNamespace(key.Namespace); err != nil {
		return 0, err
	}
	var ver lease.Version
	err := lockedPath(s.shardLockPath(key), func() error {
		_, _, err := s.readSlotsLocked(key)
		switch {
		case err == nil:
			return fmt.Errorf("file store: %s: %w", filepath.Base(s.slotPath(key, 0)), lease.ErrExists)
		case !errors.Is(err, lease.ErrNotFound):
			return err
		}
		// A time-based first version keeps versions rising across removal and re-creation.
		ver = lease.Version(time.Now().UnixNano())
		return s.writeSlot(key, 0, data, ver)
	})
	return ver, err
}

// UpdateShard implements rooms.Store.
func (s *Store) UpdateShard(_ context.Context, key rooms.ShardKey, data []byte, expected lease.Version) (lease.Version, error) {
	if err := lease.ValidateNamespace(key.Namespace); err != nil {
		return 0, err
	}
	var ver lease.Version
	err := lockedPath(s.shardLockPath(key), func() error {
		f, at, err := s.readSlotsLocked(key)
		if err != nil {
			return err
		}
		if lease.Version(f.Version) != expected {
			return fmt.Errorf("file store: %s: version %d, expected %d: %w", filepath.Base(s.slotPath(key, at)), f.Version, expected, lease.ErrConflict)
		}
		ver = lease.Version(f.Version + 1)
		return s.writeSlot(key, 1-at, data, ver) // never over the current version
	})
	return ver, err
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

// shardIndexes lists the shards of namespace that have a slot file.
func (s *Store) shardIndexes(namespace string) ([]int, error) {
	if err := lease.ValidateNamespace(namespace); err != nil {
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
	if err != nil {
		return err
	}
	for _, i := range indexes {
		key := rooms.ShardKey{Namespace: namespace, Index: i}
		err := lockedPath(s.shardLockPath(key), func() error {
			for slot := range slotNames {
				if err := os.Remove(s.slotPath(key, slot)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("file store: remove %s: %w", s.slotPath(key, slot), err)
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
	if err := lease.ValidateNamespace(namespace); err != nil {
		return nil, err
	}
	path := filepath.Join(s.dir, namespace+".rooms.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("file store: open lock: %w: %w", lease.ErrUnavailable, err)
	}
	// flock(2) cannot be interrupted by a context: lock in a goroutine, and if the caller
	// gives up first, release the lock as soon as it is taken.
	locked := make(chan error, 1)
	go func() { locked <- lockFile(f) }()
	select {
	case err := <-locked:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("file store: lock %s: %w", path, err)
		}
		return func() { _ = unlockFile(f); f.Close() }, nil
	case <-ctx.Done():
		go func() {
			if <-locked == nil {
				_ = unlockFile(f)
			}
			f.Close()
		}()
		return nil, ctx.Err()
	}
}
