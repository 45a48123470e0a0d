//go:build windows

package ledger

import (
	"errors"
	"os"
	"syscall"
)

// errSharingViolation is ERROR_SHARING_VIOLATION: another handle has the file open unshared.
const errSharingViolation syscall.Errno = 32

// lockFile opens path unshared, which no other handle can open until it closes; held reports
// another holder. (The holder's description is then unreadable too: readHolder says so.)
func lockFile(path string) (f *os.File, held bool, err error) {
	name, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return nil, false, err
	}
	h, err := syscall.CreateFile(name, syscall.GENERIC_READ|syscall.GENERIC_WRITE, 0, nil,
		syscall.OPEN_ALWAYS, syscall.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		if errors.Is(err, errSharingViolation) {
			return nil, true, nil
		}
		return nil, false, err
	}
	return os.NewFile(uintptr(h), path), false, nil
}
