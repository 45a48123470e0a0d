//go:build !linux

package filestore

// oNoAtime is O_NOATIME where it exists (noatime_linux.go); reads update access times here.
const oNoAtime = 0

func refusedNoAtime(error) bool { return false }
