//go:build !linux

package filestore

import "os"

// syncData makes f's data durable (fsync(2) where fdatasync(2) is not available).
func syncData(f *os.File) error { return f.Sync() }
