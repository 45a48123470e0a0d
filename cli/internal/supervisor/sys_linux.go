package supervisor

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// guardAttr starts the guard as the leader of a new process group, and has the kernel send it
// SIGTERM when the supervisor dies.
func guardAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// becomeSubreaper makes the guard adopt every orphaned descendant, so none escapes reaping.
func becomeSubreaper() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

// exitedWithoutReaping waits until process pid has exited, leaving it to be reaped (waitid
// with WNOWAIT): until it is, its PID names no other process. It reports false where it cannot.
func exitedWithoutReaping(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err == nil
		}
	}
}
