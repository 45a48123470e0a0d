package filestore

import (
	"context"
	"os"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

var _ rooms.WriteChecker = (*Store)(nil)

// probeBytes is how much room CheckWritable asks for: both slots of a new shard at the largest
// shard budget, so that a store that passes can take the next write.
const probeBytes = 2 * rooms.MaxShardBytes

// CheckWritable implements rooms.WriteChecker: it creates a probe file in the directory,
// reserves probeBytes in it and removes it. Out of space or quota is lease.ErrStoreFull, a
// read-only or foreign-owned directory lease.ErrPermission, both naming the path. A directory
// that is gone is recreated (dir.go).
func (s *Store) CheckWritable(context.Context) error {
	var f *os.File
	// A directory removed while in use is recreated here too: /readyz then reports the loss
	// (as damage) and a store that works, rather than a store unable to write until a write
	// comes.
	err := s.inDir(func() (err error) {
		f, err = os.CreateTemp(s.dir, ".writable.*.tmp")
		return err
	})
	if err != nil {
		return storeError("create a probe file in", s.dir, err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := reserveOrWrite(f, probeBytes); err != nil {
		return storeError("reserve space in", s.dir, err)
	}
	return nil
}

// writeZeros writes size zero bytes to f. It does not sync: /readyz calls it, and file systems
// reserve the blocks of a write when it is made (delayed allocation included).
func writeZeros(f *os.File, size int64) error {
	_, err := f.Write(make([]byte, size))
	return err
}
