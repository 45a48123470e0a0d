package incarnation

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// Host is this host's witness (lease.Witness): it proves gone an incarnation recorded on this
// host, in this boot, whose processes observably ended —
//
//   - a lock (a run's): the very file (device and inode) the incarnation holds locked for as long
//     as run, its guard or its command lives, now locked by nobody;
//   - a process (a one-shot command's caller), in this PID namespace: gone, or its PID reused (a
//     later start time), or a zombie — and nothing left in its process group.
//
// Anything else — another host, a file that cannot be opened or is another file, a process in
// another PID namespace — proves nothing, and the term ends by expiry.
type Host struct{}

var _ lease.Witness = Host{}

// recheckHost is how often a follower asks again while the incarnation's processes live: a
// system call or two, no store request.
const recheckHost = 25 * time.Millisecond

// Gone implements lease.Witness.
func (Host) Gone(_ context.Context, rec lease.Record) (string, time.Duration) {
	inc, err := lease.ParseIncarnation(rec.Incarnation)
	if err != nil || inc.Boot == "" || inc.Boot != bootID() {
		return "", 0
	}
	if inc.Lock.Path != "" {
		switch held, ok := lockHeld(inc.Lock, inc.ID); {
		case !ok:
			return "", 0
		case held:
			return "", recheckHost
		}
		return fmt.Sprintf("the processes of incarnation %s on this host have ended: nothing holds its lock %s", inc.ID, inc.Lock.Path), 0
	}
	if inc.PID != 0 && inc.PIDNS != 0 && inc.PIDNS == pidNamespace() {
		if start, _, ok := processStart(inc.PID); ok && start == inc.PIDStart {
			return "", recheckHost
		}
		// kill(-group, 0) finds any process of the group (ESRCH: none); a group whose id was
		// taken again by a new group reads as alive, which proves nothing either way.
		if err := syscall.Kill(-inc.PIDGroup, 0); !errors.Is(err, syscall.ESRCH) {
			return "", recheckHost
		}
		return fmt.Sprintf("process %d, which acquired the term (incarnation %s), has exited on this host, and nothing is left in its process group %d",
			inc.PID, inc.ID, inc.PIDGroup), 0
	}
	return "", 0
}

// lockHeld reports whether the lock file id names, of incarnation inc, is locked by anyone; ok
// is false when that cannot be told: the file is gone, or the path names another file now —
// another device or inode, or (an inode reused after the file was removed) another content
// than the incarnation's ID, which its run wrote into it.
func lockHeld(id lease.FileID, inc string) (held, ok bool) {
	f, err := os.Open(id.Path)
	if err != nil {
		return false, false
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil || uint64(st.Dev) != id.Dev || st.Ino != id.Ino {
		return false, false
	}
	content := make([]byte, len(inc)+1)
	if n, _ := io.ReadFull(f, content); n != len(inc) || string(content[:n]) != inc {
		return false, false
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false, true
	case errors.Is(err, syscall.EWOULDBLOCK):
		return true, true
	}
	return false, false
}

// unheld reports whether nothing holds the lock file at path.
func unheld(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// createLock creates dir (0755: other users' processes may read the lock, never replace it) and
// in it the incarnation's lock file, holding the incarnation's ID, open read-only and locked
// shared: run's guards share this lock, each command takes one of its own (supervisor), and a
// witness probes with an exclusive one. Nothing names the file yet, so the instant between its
// creation and its lock proves nothing to anyone.
func createLock(dir, id string) (*os.File, lease.FileID, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, lease.FileID{}, err
	}
	path := filepath.Join(dir, id+".lock")
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, lease.FileID{}, err
	}
	_, err = w.WriteString(id)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, lease.FileID{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, lease.FileID{}, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, lease.FileID{}, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, lease.FileID{}, err
	}
	return f, lease.FileID{Dev: uint64(st.Dev), Ino: st.Ino, Path: path}, nil
}

// bootID is the kernel's boot ID: what tells this host, in this boot, from every other.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// pidNamespace is the inode of this process's PID namespace, 0 when unknown.
func pidNamespace() uint64 {
	var st syscall.Stat_t
	if syscall.Stat("/proc/self/ns/pid", &st) != nil {
		return 0
	}
	return st.Ino
}

// processStart is the start time of process pid (clock ticks after boot, /proc/PID/stat's 22nd
// field) and its process group (the 5th); ok is false when there is no such process, or it is
// a zombie (it has exited).
func processStart(pid int) (start uint64, group int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// The command name, field 2, is in parentheses and may hold anything: count from its end.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 || fields[0] == "Z" || fields[0] == "X" {
		return 0, 0, false
	}
	start, err1 := strconv.ParseUint(fields[19], 10, 64)
	group, err2 := strconv.Atoi(fields[2])
	return start, group, err1 == nil && err2 == nil && group > 0
}

// InitOf reports whether this process is the init process (PID 1) of container id: of its PID
// namespace — so that the container ends only when this process does, and every process of
// it with it — and in the container's mounts (Docker bind-mounts the container's own hostname
// file at /etc/hostname), so that a hostname copied from another container proves nothing.
func InitOf(id string) bool {
	if os.Getpid() != 1 || id == "" {
		return false
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	defer f.Close()
	return mountsHostnameOf(io.LimitReader(f, 1<<20), id)
}

// mountsHostnameOf reports whether mountinfo shows, mounted at /etc/hostname, the hostname file
// of container id (a root ending in /containers/<id>/hostname).
func mountsHostnameOf(mountinfo io.Reader, id string) bool {
	want := "/containers/" + id + "/hostname"
	s := bufio.NewScanner(mountinfo)
	for s.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT …
		f := strings.Fields(s.Text())
		if len(f) >= 5 && f[4] == "/etc/hostname" && strings.HasSuffix(f[3], want) {
			return true
		}
	}
	return false
}
