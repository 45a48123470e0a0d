package runcmd

import "golang.org/x/sys/unix"

// hideFromOwnUser makes this process not dumpable: its /proc files (environ, mem) belong to
// root, and no process of its user may ptrace it. The guard and the command, exec'd, are
// dumpable again, as the kernel resets it on exec.
func hideFromOwnUser() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
