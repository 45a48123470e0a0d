package supervisor

import "time"

var processStart = time.Now()

// monoNow is this process's monotonic clock: there is no guard on Windows to share it with.
func monoNow() int64 { return int64(time.Since(processStart)) + 1 }
