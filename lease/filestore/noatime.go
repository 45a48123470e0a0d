package filestore

import "sync/atomic"

// noAtimeRefused is set once open(2) refused O_NOATIME (noatime_linux.go): the process does not
// own the store's files, and is not privileged. It is not asked again.
var noAtimeRefused atomic.Bool

// openNoAtime opens path like openRaw, asking the system not to update the file's access time
// on reads where it allows it: the rooms path reads slot headers and the version table, which
// were written since they were last read, on every write and count.
func openNoAtime(path string, flag int, perm uint32) (rawFile, error) {
	if oNoAtime != 0 && !noAtimeRefused.Load() {
		f, err := openRaw(path, flag|oNoAtime, perm)
		if !refusedNoAtime(err) {
			return f, err
		}
		noAtimeRefused.Store(true)
	}
	return openRaw(path, flag, perm)
}
