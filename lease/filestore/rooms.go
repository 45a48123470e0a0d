package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

func (s *Store) shardPath(key rooms.ShardKey) string {
	return filepath.Join(s.dir, fmt.Sprintf("%s.rooms-%02d.json", key.Namespace, key.Index))
}

func (s *Store) shardLockPath(key rooms.ShardKey) string {
	return filepath.Join(s.dir, fmt.Sprintf("%s.rooms-%02d.lock", key.Namespace, key.Index))
}

// LoadShard implements rooms.Store. It takes no lock: rename makes every read see a whole file.
func (s *Store) LoadShard(_ context.Context, key rooms.ShardKey) ([]byte, lease.Version, error) {
	if err := lease.ValidateNamespace(key.Namespace); err != nil {
		return nil, 0, err
	}
	f, err := s.readShard(s.shardPath(key))
	if err != nil {
		return nil, 0, err
	}
	if f.Namespace != key.Namespace || f.Shard != key.Index {
		return nil, 0, &lease.CorruptError{Where: fmt.Sprintf("file %q", s.shardPath(key)), Field: "namespace/shard",
			Value: fmt.Sprintf("%s/%d", f.Namespace, f.Shard), Reason: "the file belongs to another shard"}
	}
	return f.Data, lease.Version(f.Version), nil
}

func (s *Store) readShard(path string) (roomsFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return roomsFile{}, fmt.Errorf("file store: %s: %w", filepath.Base(path), lease.ErrNotFound)
	}
	if err != nil {
		return roomsFile{}, fmt.Errorf("file store: read %s: %w: %w", path, lease.ErrUnavailable, err)
	}
	var f roomsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return roomsFile{}, &lease.CorruptError{Where: fmt.Sprintf("file %q", path),
			Reason: fmt.Sprintf("not a rooms shard (%v); repair or remove it", err)}
	}
	if f.Schema != roomsSchema || f.Version == 0 {
		return roomsFile{}, &lease.CorruptError{Where: fmt.Sprintf("file %q", path), Field: "schema",
			Value: fmt.Sprint(f.Schema), Reason: fmt.Sprintf("this version reads schema %d with a positive version only", roomsSchema)}
	}
	return f, nil
}

// CreateShard implements rooms.Store.
func (s *Store) CreateShard(_ context.Context, key rooms.ShardKey, data []byte) (lease.Version, error) {
	if err := lease.ValidateNamespace(key.Namespace); err != nil {
		return 0, err
	}
	var ver lease.Version
	err := lockedPath(s.shardLockPath(key), func() error {
		_, err := s.readShard(s.shardPath(key))
		switch {
		case err == nil:
			return fmt.Errorf("file store: %s: %w", filepath.Base(s.shardPath(key)), lease.ErrExists)
		case !errors.Is(err, lease.ErrNotFound):
			return err
		}
		// A time-based first version keeps versions rising across removal and re-creation.
		ver = lease.Version(time.Now().UnixNano())
		return s.writeShard(key, data, ver)
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
		f, err := s.readShard(s.shardPath(key))
		if err != nil {
			return err
		}
		if lease.Version(f.Version) != expected {
			return fmt.Errorf("file store: %s: version %d, expected %d: %w", filepath.Base(s.shardPath(key)), f.Version, expected, lease.ErrConflict)
		}
		ver = lease.Version(f.Version + 1)
		return s.writeShard(key, data, ver)
	})
	return ver, err
}

// ListShards implements rooms.Store.
func (s *Store) ListShards(_ context.Context, namespace string) ([]rooms.Shard, error) {
	if err := lease.ValidateNamespace(namespace); err != nil {
		return nil, err
	}
	// A namespace holds no glob metacharacters (ValidateNamespace). Another namespace can match
	// the pattern ("a" matches "a.rooms-x.rooms-01.json"); the envelope tells them apart.
	paths, err := filepath.Glob(filepath.Join(s.dir, namespace+".rooms-*.json"))
	if err != nil {
		return nil, fmt.Errorf("file store: list shards: %w", err)
	}
	var out []rooms.Shard
	for _, p := range paths {
		f, err := s.readShard(p)
		if errors.Is(err, lease.ErrNotFound) { // removed since the glob
			continue
		}
		if err != nil {
			return nil, err
		}
		if f.Namespace == namespace && p == s.shardPath(rooms.ShardKey{Namespace: namespace, Index: f.Shard}) {
			out = append(out, rooms.Shard{Index: f.Shard, Data: f.Data, Version: lease.Version(f.Version)})
		}
	}
	return out, nil
}

// DeleteShards implements rooms.Store. Lock files stay, as for elections: removing one could let
// two processes lock two different inodes of the same name.
func (s *Store) DeleteShards(ctx context.Context, namespace string) error {
	shards, err := s.ListShards(ctx, namespace)
	if err != nil {
		return err
	}
	for _, sh := range shards {
		key := rooms.ShardKey{Namespace: namespace, Index: sh.Index}
		err := lockedPath(s.shardLockPath(key), func() error {
			if err := os.Remove(s.shardPath(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("file store: remove %s: %w", s.shardPath(key), err)
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

// writeShard replaces the shard's file atomically and durably (temporary file, fsync, rename,
// fsync of the directory).
func (s *Store) writeShard(key rooms.ShardKey, data []byte, ver lease.Version) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Keep the document byte for byte: HTML escaping would rewrite '<' in metadata.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(roomsFile{Schema: roomsSchema, Version: uint64(ver), Namespace: key.Namespace,
		Shard: key.Index, Data: data}); err != nil {
		return fmt.Errorf("file store: encode shard: %w", err)
	}
	path := s.shardPath(key)
	tmp, err := os.CreateTemp(s.dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("file store: %w: %w", lease.ErrUnavailable, err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("file store: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("file store: sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("file store: close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("file store: replace %s: %w", path, err)
	}
	return syncDir(s.dir)
}

// lockedPath runs fn while holding an exclusive flock of the lock file at path.
func lockedPath(path string, fn func() error) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("file store: open lock: %w: %w", lease.ErrUnavailable, err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return fmt.Errorf("file store: lock %s: %w", f.Name(), err)
	}
	defer unlockFile(f)
	return fn()
}
