//go:build !linux

package filestore

import "os"

// reserve is a no-op where fallocate(2) does not exist: a write that runs out of space there
// can leave the slot it was writing torn, which the other slot survives.
func reserve(rawFile, int64) error { return nil }

// reserveOrWrite allocates size bytes of the new file f by writing zeros.
func reserveOrWrite(f *os.File, size int64) error { return writeZeros(f, size) }
