//go:build !unix

package connlimit

// descriptorLimit: no RLIMIT_NOFILE here; the default bound applies.
func descriptorLimit() (int, bool) { return 0, false }
