package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// The store's directory can vanish while processes use it: an operator's rm -rf, a cleanup job
// that takes it for scratch space. Every election and rooms shard in it is lost then, and every
// lock file: each write, which opens its lock file first, would fail with "no such file or
// directory" until the processes restart. So the opening of a lock file (every write's first
// step) and CheckWritable recreate a missing directory, as New does on a first start, and go on
// on the empty directory, reporting the loss as damage (OnDamage).
//
// What is written afterwards stays above what was lost by the rules of a destroy and re-create
// (docs/safety.md §2 and §7b), on one host with one clock: an election's fences start at the
// wall clock in microseconds, a rooms term is at least the wall clock in microseconds, and a
// version at least the wall clock in nanoseconds. What no rule can keep is the lost leases:
// a holder of one may still be at work until its next renewal (which finds no record) or its
// deadline, while a new term starts on the recreated directory — the fences tell them apart.
//
// Reads take no lock, and do not recreate: a missing directory reads as elections and shards
// that do not exist, which is what it holds.

// inDir runs op, which uses a file in the store's directory, and, when op fails because the
// directory is gone, recreates the directory and runs op once more. The error is op's: a
// directory that cannot be recreated leaves op's own failure, which names its path.
func (s *Store) inDir(op func() error) error {
	err := op()
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if rerr := s.recreateDir(); rerr != nil {
		return fmt.Errorf("%w; %w", err, rerr)
	}
	// Recreated here or by another goroutine or process, or it never went (a dangling symlink
	// in its place): the retry's answer is the answer.
	return op()
}

// recreateDir recreates the store's directory (mode 0700, as New) if it is missing, syncs its
// parent so that the new entry survives a power loss, forgets what this Store knew of the
// files in it and reports the loss. A directory that exists is left alone, unreported: another
// goroutine or process recreated it first (and reported it), or it never went. Recreations are
// serialised within the process (recreating), so that the goroutines that found the directory
// missing at once report it once.
func (s *Store) recreateDir() error {
	s.recreating.Lock()
	defer s.recreating.Unlock()
	parent := filepath.Dir(s.dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return storeError("recreate the parent directory of", s.dir, err)
	}
	err := os.Mkdir(s.dir, 0o700)
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil
	case err != nil:
		return storeError("recreate directory", s.dir, err)
	}
	// The caches name files that are gone; anything they still say would send a write to a
	// whole read anyway, but forgetting says what happened.
	s.slots.forgetAll()
	s.shardSet.forgetAll()
	s.notify(rooms.Damage{Where: s.dir, Reason: "the store directory was missing (removed while in use) and was recreated empty: " +
		"every election and rooms shard in it was lost. New fences and terms start above the lost ones (wall clock); " +
		"a holder of a lost lease or room may still be at work until its next renewal or deadline"})
	return syncDir(parent)
}
