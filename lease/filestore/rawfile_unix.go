//go:build unix

package filestore

import (
	"errors"
	"io/fs"
	"syscall"
)

// The rooms write path opens a few small files per write: the shard's lock file, both slots'
// header lines (one of them the slot it then writes), the version table. os.OpenFile wraps each
// in an *os.File, which on Linux tries to register the file with the network poller (refused
// for a regular file) and sets it non-blocking, and Fd sets it blocking again: three system
// calls on top of the open, for files that are read or written once and closed; and even
// os.NewFile costs an allocation and a cleanup registration per file. rawFile uses the
// descriptor directly.
type rawFile int

// openRaw opens path like os.OpenFile (close-on-exec), with the same *fs.PathError.
func openRaw(path string, flag int, perm uint32) (rawFile, error) {
	for {
		fd, err := syscall.Open(path, flag|syscall.O_CLOEXEC, perm)
		switch {
		case err == nil:
			return rawFile(fd), nil
		case !errors.Is(err, syscall.EINTR):
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
}

func (f rawFile) close() error { return syscall.Close(int(f)) }

// fd returns the descriptor.
func (f rawFile) fd() int { return int(f) }

// size returns the file's size (fstat(2)).
func (f rawFile) size() (int64, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Fstat(int(f), &st)
		switch {
		case err == nil:
			return st.Size, nil
		case !errors.Is(err, syscall.EINTR):
			return 0, err
		}
	}
}

// readAt reads into b from offset off until b is full or the file ends; n is what it read.
func (f rawFile) readAt(b []byte, off int64) (n int, err error) {
	for n < len(b) {
		m, err := syscall.Pread(int(f), b[n:], off+int64(n))
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return n, err
		case m == 0:
			return n, nil
		}
		n += m
	}
	return n, nil
}

// writeAt writes all of b at offset off.
func (f rawFile) writeAt(b []byte, off int64) error {
	for len(b) > 0 {
		m, err := syscall.Pwrite(int(f), b, off)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return err
		}
		b, off = b[m:], off+int64(m)
	}
	return nil
}

// lock takes an exclusive flock(2), which the kernel drops when the process dies.
func (f rawFile) lock() error {
	for {
		err := syscall.Flock(int(f), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func (f rawFile) unlock() error { return syscall.Flock(int(f), syscall.LOCK_UN) }

// tryLock takes an exclusive flock(2) if no one holds one, without waiting.
func (f rawFile) tryLock() (bool, error) {
	for {
		err := syscall.Flock(int(f), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case !errors.Is(err, syscall.EINTR):
			return false, err
		}
	}
}
