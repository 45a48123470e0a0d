//go:build unix

package settings

import (
	"os"
	"syscall"
)

// openFlags open without blocking: a named pipe with no writer (or a device waiting for a
// carrier) would otherwise hold open(2), and a signal the program handles would not end it.
// O_NONBLOCK does not change reads of a regular file, the only kind that is read. O_NOCTTY:
// a terminal swapped in never becomes the process's controlling terminal.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
