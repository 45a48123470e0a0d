package filestore

import (
	"os"
	"syscall"
)

// syncData makes f's data durable without its timestamps (fdatasync(2)): an in-place slot
// write that does not grow the file needs no metadata journal commit.
func syncData(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
