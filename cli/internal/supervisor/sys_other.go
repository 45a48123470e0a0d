//go:build unix && !linux

package supervisor

import "syscall"

// guardAttr starts the guard as the leader of a new process group. Outside Linux there is no
// parent-death signal: a SIGKILLed supervisor leaves the guard to finish its child.
func guardAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// becomeSubreaper is Linux-only.
func becomeSubreaper() {}

// exitedWithoutReaping cannot wait without reaping here: the caller reaps at once.
func exitedWithoutReaping(int) bool { return false }
