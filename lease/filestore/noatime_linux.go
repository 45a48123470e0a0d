package filestore

import (
	"errors"
	"syscall"
)

// oNoAtime opens a file without updating its access time on reads (O_NOATIME). Every rooms
// write reads the header line of a slot written since it was last read, and on a relatime mount
// (the default) that read updated the slot's access time: an inode made dirty, and written back
// by the next flush, on every write.
const oNoAtime = syscall.O_NOATIME

// refusedNoAtime reports whether open(2) refused O_NOATIME, which only the file's owner (or a
// privileged process) may ask for.
func refusedNoAtime(err error) bool { return errors.Is(err, syscall.EPERM) }
