package filestore

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// The version table of a namespace's rooms shards, <namespace>.rooms.versions: one little-endian
// uint64 per shard index, the version of the shard's last write, announced there by every writer
// before it writes the slot (under the shard's lock). ShardVersions answers the active-room count
// from it with one read instead of reading the header line of every slot, which an activation
// did under the activation lock (about 390 system calls for 64 shards). It is never flushed and
// never trusted alone:
//
//   - An entry that differs from what the count last saw makes it read the shard (a writer that
//     announced and then failed or died leaves an entry no slot holds: the shard is read on
//     every count until its next write).
//   - An entry of 0 (a shard written before the table existed, a table lost with a power cut)
//     falls back to the slots' header lines.
//   - After a power cut the table may hold older entries, but every process starts with no count
//     state and reads every shard once.
//
// Its page cache is shared by every process of the host using the directory. A process of an
// older version writes shards without announcing them: while both run against one directory
// (an upgrade in place), the count may miss that process's writes, and the active-room limit
// may be exceeded by them. Terms stay unique either way.

const versionEntry = 8 // bytes per shard in the table

func (s *Store) versionTablePath(namespace string) string {
	return s.namespaceFile(namespace, ".rooms.versions")
}

// announceVersion records in the table that shard key is being written at version ver. A
// failure is returned: a write that could not be announced must not happen, or another
// process's count could miss it. The table is opened for every use, not held: a file held open
// for writing would keep its file system from being remounted read-only. Like lock files, a
// table is never removed, so that every process writes the same inode.
func (s *Store) announceVersion(key rooms.ShardKey, ver uint64) error {
	path := s.versionTablePath(key.Namespace)
	f, err := openRaw(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return storeError("open", path, err)
	}
	defer f.close()
	var b [versionEntry]byte
	binary.LittleEndian.PutUint64(b[:], ver)
	if err := f.writeAt(b[:], int64(key.Index)*versionEntry); err != nil {
		return storeError("write", path, err)
	}
	return nil
}

// versionTable is the bytes of a namespace's version table as read, one versionEntry per shard.
type versionTable [rooms.MaxShards * versionEntry]byte

// version returns shard i's announced version, 0 when none was announced.
func (t *versionTable) version(i int) uint64 { return binary.LittleEndian.Uint64(t[i*versionEntry:]) }

// versionTables keeps tables for the next counts. A table and its decoded form on the stack
// (a kilobyte, deep in a request's call chain) made the goroutine's stack grow on every
// activation, and the collector shrink it again: 4 % of the server's CPU per request.
var versionTables = sync.Pool{New: func() any { return new(versionTable) }}

// announcedVersions reads the table of namespace into t; a shard past the table's end (or
// partly past it), or a namespace without a table, announced nothing (zero entries).
func (s *Store) announcedVersions(namespace string, t *versionTable) error {
	*t = versionTable{}
	path := s.versionTablePath(namespace)
	f, err := openNoAtime(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) { // nothing announced yet
		return nil
	}
	if err != nil {
		return storeError("open", path, err)
	}
	defer f.close()
	n, err := f.readAt(t[:], 0)
	if err != nil {
		return storeError("read", path, err)
	}
	clear(t[n/versionEntry*versionEntry:]) // a partial entry at the end announces nothing
	return nil
}
