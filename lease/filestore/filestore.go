// Package filestore keeps lease records in a directory shared by several processes on ONE host.
//
// It coordinates one host only: two machines sharing the directory over a network file system
// get no guarantee at all. Each election is one file of two slots written in turn in place
// (record.go), under an exclusive flock(2) on a lock file beside it, so a crash at any point
// leaves either the old or the new record, and a crashed process never leaves the lock held.
// Linux and macOS.
package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// schema is the schema of a format-1 election file (one JSON document, replaced by rename),
// which this version reads and replaces with format 2 at its next write (record.go). A file of
// another schema is never overwritten.
const schema = 1

// Store is a directory of election files.
type Store struct {
	dir string
	// damage is what the rooms shards' slots report (damage.go).
	damage damageLog
	// commit flushes the rooms shards' slot writes together (commit.go).
	commit groupCommit
	// slots is what this Store last knew of each rooms shard's slots (slotcache.go).
	slots slotCache
	// shardSet is which rooms shards exist, for the active-room count (shardset.go).
	shardSet shardSet
	// namespaces are the valid namespaces the rooms calls were asked about (namespaces.go).
	namespaces knownNamespaces
	// recreating serialises the recreation of a directory removed while in use (dir.go).
	recreating sync.Mutex
}

var _ lease.Store = (*Store)(nil)

// New returns a store in dir, creating the directory (mode 0700) when it is missing.
func New(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("file store: the directory must not be empty")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("file store: create directory: %w", err)
	}
	return &Store{dir: abs}, nil
}

// Dir returns the store's absolute directory.
func (s *Store) Dir() string { return s.dir }

// Describe implements lease.Store.
func (s *Store) Describe() string { return "file store " + s.dir + " (this host only)" }

// fileRecord is the on-disk form of one election: a format-1 file, or a slot of a format-2
// file.
type fileRecord struct {
	Schema  int    `json:"schema"`
	Version uint64 `json:"version"`
	// Previous is, in a format-2 slot, the version the other slot held when this one was
	// written (its own version when both were written at once).
	Previous   uint64    `json:"previous,omitempty"`
	Namespace  string    `json:"namespace"`
	HolderID   string    `json:"holder_id"`
	NodeID     string    `json:"node_id"`
	TaskID     string    `json:"task_id"`
	Fence      uint64    `json:"fence"`
	AcquiredAt time.Time `json:"acquired_at"`
	RenewedAt  time.Time `json:"renewed_at"`
	ExpiresAt  time.Time `json:"expires_at"`
	TTLMillis  int64     `json:"ttl_ms"`
	// Incarnation is the holder's lease.Incarnation; a version that predates it ignores it.
	Incarnation string `json:"incarnation,omitempty"`
}

func (s *Store) path(namespace string) string {
	return filepath.Join(s.dir, namespace+".lease.json")
}

func (s *Store) lockPath(namespace string) string {
	return filepath.Join(s.dir, namespace+".lease.lock")
}

// Load implements lease.Store. It takes no lock unless it finds a slot that is not whole (see
// read).
func (s *Store) Load(_ context.Context, namespace string) (lease.Record, lease.Version, error) {
	if err := lease.ValidateNamespace(namespace); err != nil {
		return lease.Record{}, 0, err
	}
	return s.read(namespace)
}

func (s *Store) read(namespace string) (lease.Record, lease.Version, error) {
	r, err := s.readRecord(namespace)
	if err == nil && r.damage != "" {
		// A slot that is not whole is mostly a write in progress, of the other slot — or of
		// the current one, when it held a release (record.go, "A release"): the whole slot
		// may then be older than one read a moment ago. Read again; if a slot is still not
		// whole, read under the lock, where no write is in progress.
		if r, err = s.readRecord(namespace); err == nil && r.damage != "" {
			err = s.locked(namespace, func() error {
				r, err = s.readRecord(namespace)
				return err
			})
		}
	}
	if errors.Is(err, errTornRecord) {
		// A format-2 file with no whole slot is damage, not a write in progress (a write
		// touches one slot), but only a read under the lock, where no write can be in progress,
		// says so.
		err = s.locked(namespace, func() error {
			r, err = s.readLocked(namespace)
			return err
		})
	}
	if err != nil {
		return lease.Record{}, 0, err
	}
	return r.file.record(), lease.Version(r.file.Version), nil
}

// record is fr as the lease package's Record.
func (fr fileRecord) record() lease.Record {
	return lease.Record{
		Namespace: fr.Namespace, HolderID: fr.HolderID, NodeID: fr.NodeID, TaskID: fr.TaskID,
		Fence: fr.Fence, AcquiredAt: fr.AcquiredAt, RenewedAt: fr.RenewedAt, ExpiresAt: fr.ExpiresAt,
		TTL: time.Duration(fr.TTLMillis) * time.Millisecond, Incarnation: fr.Incarnation,
	}
}

// fileRecordOf is rec as the record of version ver, written over version prev.
func fileRecordOf(rec lease.Record, ver, prev uint64) fileRecord {
	return fileRecord{
		Version: ver, Previous: prev, Namespace: rec.Namespace,
		HolderID: rec.HolderID, NodeID: rec.NodeID, TaskID: rec.TaskID, Fence: rec.Fence,
		AcquiredAt: rec.AcquiredAt, RenewedAt: rec.RenewedAt, ExpiresAt: rec.ExpiresAt,
		TTLMillis: rec.TTL.Milliseconds(), Incarnation: rec.Incarnation,
	}
}

// parseFormat1 reads a format-1 file: one JSON document of schema 1.
func parseFormat1(path, namespace string, data []byte) (fileRecord, error) {
	var fr fileRecord
	if err := json.Unmarshal(data, &fr); err != nil {
		return fileRecord{}, &lease.CorruptError{Where: fmt.Sprintf("file %q", path),
			Reason: fmt.Sprintf("not a lease record (%v); repair it or remove it with the destroy command", err)}
	}
	corrupt := func(field, value, reason string) error {
		return &lease.CorruptError{Where: fmt.Sprintf("file %q", path), Field: field, Value: value, Reason: reason}
	}
	if fr.Schema != schema {
		return fileRecord{}, corrupt("schema", fmt.Sprint(fr.Schema), fmt.Sprintf("this version reads schema %d only; upgrade lfp-swarm-lease or destroy the election", schema))
	}
	return fr, checkRecord(fr, namespace, corrupt)
}

// checkRecord checks what every record, of either format, must hold.
func checkRecord(fr fileRecord, namespace string, corrupt func(field, value, reason string) error) error {
	switch {
	case fr.Namespace != namespace:
		return corrupt("namespace", fr.Namespace, fmt.Sprintf("the file belongs to another election than %q", namespace))
	case fr.Version == 0:
		return corrupt("version", "0", "must be positive")
	case fr.TTLMillis < 0:
		return corrupt("ttl_ms", fmt.Sprint(fr.TTLMillis), "must not be negative")
	case fr.HolderID != "" && fr.TTLMillis == 0:
		return corrupt("ttl_ms", "0", "a held lease needs a positive TTL")
	}
	return nil
}

// Create implements lease.Store.
func (s *Store) Create(_ context.Context, rec lease.Record) (lease.Version, error) {
	if err := lease.ValidateNamespace(rec.Namespace); err != nil {
		return 0, err
	}
	var ver lease.Version
	err := s.locked(rec.Namespace, func() error {
		_, err := s.readLocked(rec.Namespace)
		switch {
		case err == nil:
			return fmt.Errorf("file store: %q: %w", rec.Namespace, lease.ErrExists)
		case !errors.Is(err, lease.ErrNotFound):
			return err
		}
		// A time-based first version keeps versions rising across destroy and create, so a
		// record created again never repeats a version a reader has seen.
		ver = lease.Version(time.Now().UnixNano())
		return s.writeRecord(recordRead{}, fileRecordOf(rec, uint64(ver), 0))
	})
	return ver, err
}

// Update implements lease.Store.
func (s *Store) Update(_ context.Context, rec lease.Record, expected lease.Version) (lease.Version, error) {
	if err := lease.ValidateNamespace(rec.Namespace); err != nil {
		return 0, err
	}
	var ver lease.Version
	var pending *unflushedSlot
	// A record that holds nothing is flushed after the lock goes (record.go, "A release").
	flushUnlocked := !rec.Held()
	err := s.locked(rec.Namespace, func() error {
		r, err := s.readLocked(rec.Namespace)
		if err != nil {
			return err
		}
		cur := lease.Version(r.file.Version)
		if cur != expected {
			return fmt.Errorf("file store: %q: version %d, expected %d: %w", rec.Namespace, cur, expected, lease.ErrConflict)
		}
		ver = nextVersion(cur)
		pending, err = s.writeRecordUnflushed(r, fileRecordOf(rec, uint64(ver), uint64(cur)))
		if err != nil || flushUnlocked {
			return err
		}
		return pending.flush()
	})
	if err == nil && flushUnlocked {
		err = pending.flush()
	}
	return ver, err
}

// Delete implements lease.Store. The lock file stays: removing it could let two processes lock
// two different inodes of the same name.
func (s *Store) Delete(_ context.Context, namespace string) error {
	if err := lease.ValidateNamespace(namespace); err != nil {
		return err
	}
	return s.locked(namespace, func() error {
		err := os.Remove(s.path(namespace))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return storeError("remove", s.path(namespace), err)
		}
		return syncDir(s.dir)
	})
}

// replaceFile puts data at path atomically and durably: it writes a temporary file beside it,
// syncs it, renames it over path and syncs the directory. A failure at any step (a full disk)
// removes the temporary file, so that nothing partial is left behind to trip later writes or
// fill the disk further.
func (s *Store) replaceFile(path string, data []byte) error {
	return s.replaceFiles([]string{path}, data)
}

// replaceFiles puts data at every one of paths, or at none of them: it writes and syncs every
// temporary file before it renames the first into place, so that a file system out of space
// refuses the write while no path holds it yet — the second of two files refused after the
// first was in place would leave the first holding a write never acknowledged, read as
// damage once space returns. A rename that fails after others succeeded (a directory that
// needs a block it cannot get) removes the files it put in place: callers pass only paths that
// hold nothing yet but for an empty file (a new shard's slots), which reads the same as none.
func (s *Store) replaceFiles(paths []string, data []byte) error {
	tmps := make([]string, 0, len(paths))
	defer func() {
		for _, tmp := range tmps {
			os.Remove(tmp) // no-op after the rename
		}
	}()
	for _, path := range paths {
		tmp, err := s.writeTemp(path, data)
		if err != nil {
			return err
		}
		tmps = append(tmps, tmp)
	}
	for i, tmp := range tmps {
		if err := os.Rename(tmp, paths[i]); err != nil {
			err = storeError("replace", paths[i], err)
			for _, done := range paths[:i] {
				if rerr := os.Remove(done); rerr != nil {
					err = fmt.Errorf("%w; undoing the write of %s failed too: %w", err, done, rerr)
				}
			}
			return err
		}
	}
	return syncDir(s.dir)
}

// writeTemp writes data to a new temporary file beside path and syncs it, returning its name;
// on failure it leaves nothing behind.
func (s *Store) writeTemp(path string, data []byte) (string, error) {
	tmp, err := os.CreateTemp(s.dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return "", storeError("create a temporary file in", s.dir, err)
	}
	fail := func(op string, err error) (string, error) {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", storeError(op, tmp.Name(), err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail("write", err)
	}
	if err := tmp.Sync(); err != nil {
		return fail("sync", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", storeError("close", tmp.Name(), err)
	}
	return tmp.Name(), nil
}

// locked runs fn while holding the election's exclusive lock.
func (s *Store) locked(namespace string, fn func() error) error {
	return s.lockedPath(s.lockPath(namespace), fn)
}

// lockedPath runs fn while holding an exclusive flock of the lock file at path.
func (s *Store) lockedPath(path string, fn func() error) error {
	f, err := s.openLock(path)
	if err != nil {
		return err
	}
	defer f.close()
	if err := f.lock(); err != nil {
		return fmt.Errorf("file store: lock %s: %w", path, err)
	}
	defer f.unlock()
	return fn()
}

// tryLockedPath runs fn while holding an exclusive flock of the lock file at path if nobody
// holds it, without waiting; it reports whether fn ran.
func (s *Store) tryLockedPath(path string, fn func() error) (bool, error) {
	f, err := s.openLock(path)
	if err != nil {
		return false, err
	}
	defer f.close()
	locked, err := f.tryLock()
	if err != nil || !locked {
		return false, err
	}
	defer f.unlock()
	return true, fn()
}

// openLock opens (creating) the lock file at path, the first step of every write: it recreates
// the store's directory when that is gone (dir.go).
func (s *Store) openLock(path string) (rawFile, error) {
	var f rawFile
	err := s.inDir(func() (err error) {
		f, err = openRaw(path, os.O_RDWR|os.O_CREATE, 0o600)
		return err
	})
	if err != nil {
		return f, storeError("open lock", path, err)
	}
	return f, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return storeError("open directory", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return storeError("sync directory", dir, err)
	}
	return nil
}
