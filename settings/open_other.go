//go:build !unix

package settings

import "os"

// openFlags: without O_NONBLOCK, the checks of the path and of the opened descriptor are what
// refuse a pipe or a device.
const openFlags = os.O_RDONLY
