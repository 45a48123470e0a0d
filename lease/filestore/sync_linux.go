package filestore

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// syncData makes f's data durable without its timestamps (fdatasync(2)): an in-place slot
// write that does not grow the file needs no metadata journal commit.
func syncData(f rawFile) error {
	for {
		err := syscall.Fdatasync(f.fd())
		if err != syscall.EINTR {
			return err
		}
	}
}

// syncBatch makes the data of every file of the batch durable with one system call: a single
// file with fdatasync(2); several with syncfs(2) on the file system holding them (all slots are
// in the store's directory), which writes back every dirty file of that file system and flushes
// the device once, and reports the file system's write-back errors since the file it is called on was opened
// (Linux 5.8 and later): it is called on the batch's earliest-opened file. One
// fdatasync each would cost a device flush per file. It returns the calls made.
func syncBatch(batch []*flushRequest) (calls int, err error) {
	if len(batch) == 1 {
		return 1, syncData(batch[0].f)
	}
	first := batch[0]
	for _, r := range batch[1:] {
		if r.opened < first.opened {
			first = r
		}
	}
	for {
		err := unix.Syncfs(first.f.fd())
		if err != unix.EINTR {
			return 1, err
		}
	}
}
