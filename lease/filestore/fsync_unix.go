//go:build unix

package filestore

import (
	"errors"
	"syscall"
)

// fsync makes the file's data and metadata durable (fsync(2)).
func fsync(f rawFile) error {
	for {
		err := syscall.Fsync(int(f))
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
