package cmdutil

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// PermissionDenied reports a store that refuses this process access: the sentinel of the
// stores, or the operating system's own refusal (EACCES, EPERM, a read-only file system)
// wherever a store passed it on.
func PermissionDenied(err error) bool {
	return errors.Is(err, lease.ErrPermission) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// StoreFull reports a store without space for a write (ENOSPC, EDQUOT).
func StoreFull(err error) bool {
	return errors.Is(err, lease.ErrStoreFull) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// DescribeStoreFault restates a permission or space error so that it names the path and what
// to do, instead of the generic wording of the layer that met it ("store unreachable").
func DescribeStoreFault(err error, code int) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return err
	}
	switch code {
	case ExitPermission:
		return fmt.Errorf("permission denied: cannot %s %s (%v): give this process read and write access to that directory (it may be read-only or owned by another user), or set store to another one", pe.Op, pe.Path, pe.Err)
	case ExitStoreFull:
		return fmt.Errorf("no space left: cannot %s %s (%v): free space or raise the quota of its file system; nothing partial was written", pe.Op, pe.Path, pe.Err)
	}
	return err
}
