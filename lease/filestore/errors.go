package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// storeError wraps the failure of op on path with the lease sentinel that tells the caller what
// it means: lease.ErrStoreFull when the file system is out of space or quota (retry once space
// returns), lease.ErrPermission when the process may not use the file (an operator must fix
// owner, mode or a read-only mount), else lease.ErrUnavailable. The path is in the message, so
// that the operator knows which file or directory to look at.
func storeError(op, path string, err error) error {
	switch {
	case isFull(err):
		return fmt.Errorf("file store: %s %s: %w (free space or raise the quota of the store's file system): %w", op, path, lease.ErrStoreFull, err)
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return fmt.Errorf("file store: %s %s: %w (check the owner and mode of the store directory and that its file system is mounted writable): %w",
			op, path, lease.ErrPermission, err)
	}
	return fmt.Errorf("file store: %s %s: %w: %w", op, path, lease.ErrUnavailable, err)
}
