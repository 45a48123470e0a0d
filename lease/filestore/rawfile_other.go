//go:build !unix

package filestore

import (
	"errors"
	"io"
	"os"
)

var errUnsupported = errors.New("the file store needs Linux or macOS (flock)")

// rawFile is an *os.File where the file store cannot lock (rawfile_unix.go has the real one).
type rawFile struct{ f *os.File }

func openRaw(path string, flag int, perm uint32) (rawFile, error) {
	f, err := os.OpenFile(path, flag, os.FileMode(perm))
	return rawFile{f}, err
}

func (f rawFile) close() error { return f.f.Close() }

func (f rawFile) size() (int64, error) {
	info, err := f.f.Stat()
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}

func (f rawFile) sync() error { return f.f.Sync() }

func (f rawFile) readAt(b []byte, off int64) (int, error) {
	n, err := f.f.ReadAt(b, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

func (f rawFile) writeAt(b []byte, off int64) error {
	_, err := f.f.WriteAt(b, off)
	return err
}

func (rawFile) lock() error            { return errUnsupported }
func (rawFile) unlock() error          { return errUnsupported }
func (rawFile) tryLock() (bool, error) { return false, errUnsupported }
