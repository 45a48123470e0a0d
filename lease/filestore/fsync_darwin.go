package filestore

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// sync makes the file's data and metadata durable. On macOS fsync(2) only hands the data to the
// drive, whose cache may still lose it at a power loss; F_FULLFSYNC asks the drive to write its
// cache out, as os.File.Sync does. File systems that do not support it get fsync(2).
func (f rawFile) sync() error {
	for {
		_, err := unix.FcntlInt(uintptr(f), unix.F_FULLFSYNC, 0)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.ENOTTY), errors.Is(err, syscall.EINVAL):
			return fsync(f)
		default:
			return err
		}
	}
}
