package filestore

import (
	"errors"
	"os"
	"syscall"
)

// reserve allocates the blocks of f's first size bytes (fallocate(2)), so that a file system
// out of space fails here, before a byte of the slot is overwritten, and not halfway through
// the write. File systems without fallocate are written without the reservation.
func reserve(f rawFile, size int64) error {
	for {
		err := syscall.Fallocate(f.fd(), 0, 0, size)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.ENOSYS):
			return nil
		}
		return err
	}
}

// reserveOrWrite allocates size bytes of the new file f, writing zeros where fallocate(2) is
// not supported, so that the answer is the file system's either way.
func reserveOrWrite(f *os.File, size int64) error {
	err := syscall.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		return writeZeros(f, size)
	}
	return err
}
