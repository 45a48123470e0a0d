//go:build unix

package filestore

import (
	"errors"
	"syscall"
)

// isFull reports whether err says the file system has no space or quota left.
func isFull(err error) bool { return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) }
