//go:build unix

package connlimit

import "syscall"

// descriptorLimit is the process's soft RLIMIT_NOFILE, which Go raised to one below the hard
// limit at start.
func descriptorLimit() (int, bool) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur == 0 {
		return 0, false
	}
	return int(min(l.Cur, 1<<30)), true
}
