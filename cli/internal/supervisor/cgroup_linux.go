package supervisor

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupPrefix starts the name of every cgroup the guard creates, followed by its PID.
const cgroupPrefix = "lfp-swarm-lease-guard-"

// cgroup is a cgroup v2 made for one command: the command starts in it (clone3 with
// CLONE_INTO_CGROUP, so not even its first instructions run outside), and nothing it starts can
// leave it, whatever it does with sessions and parents. Killing the cgroup kills them all.
type cgroup struct {
	dir string
	fd  int
}

// newCgroup creates a child of the guard's own cgroup v2, or fails when there is none or it is
// not writable (cgroup v1 only, a read-only /sys/fs/cgroup in a container).
func newCgroup() (*cgroup, error) {
	dir, err := guardCgroupDir(os.Getpid())
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create cgroup: %w", err)
	}
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("open cgroup: %w", err)
	}
	return &cgroup{dir: dir, fd: fd}, nil
}

// guardCgroupDir is the cgroup the guard with PID guard creates: a child of the cgroup this
// process is in, which the supervisor shares with its guard. The supervisor removes it when the
// guard died before it could.
func guardCgroupDir(guard int) (string, error) {
	mount, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	own, err := ownCgroup()
	if err != nil {
		return "", err
	}
	return filepath.Join(mount, own, cgroupPrefix+strconv.Itoa(guard)), nil
}

// intoCgroup makes attr start its process inside the cgroup.
func (c *cgroup) intoCgroup(attr *syscall.SysProcAttr) {
	attr.UseCgroupFD, attr.CgroupFD = true, c.fd
}

// close releases the directory descriptor (the cgroup stays).
func (c *cgroup) close() {
	if c.fd >= 0 {
		_ = unix.Close(c.fd)
		c.fd = -1
	}
}

// cgroupProcs lists the processes in the cgroup at dir.
func cgroupProcs(dir string) []int {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cgroupMembers lists the live processes of the cgroup at dir.
func cgroupMembers(dir string) []process {
	var out []process
	for _, pid := range cgroupProcs(dir) {
		if p, ok := readProcess(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// killCgroup SIGKILLs every process of the cgroup at dir — all at once through cgroup.kill
// (Linux 5.14), else one by one from cgroup.procs until it is empty — and returns how many
// processes it held.
func killCgroup(dir string) int {
	pids := cgroupProcs(dir)
	if len(pids) == 0 {
		return 0
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		// Without cgroup.kill, a process may fork between the read and the kill: repeat.
		for i := 0; i < 100 && len(pids) > 0; i, pids = i+1, cgroupProcs(dir) {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	return len(pids)
}

// removeCgroup kills what is left in the cgroup at dir and removes it, waiting up to a second
// for the killed processes to leave it. It reports how many processes were killed.
func removeCgroup(dir string) int {
	if dir == "" {
		return 0
	}
	killed := killCgroup(dir)
	for deadline := time.Now().Add(time.Second); ; {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
			return killed
		}
		time.Sleep(5 * time.Millisecond) // the kernel empties a killed cgroup asynchronously
	}
}

// cgroup2Mount finds where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or
// /sys/fs/cgroup/unified on hybrid hosts).
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID parent major:minor root mountpoint options [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields := strings.Fields(pre)
		if ok && len(fields) >= 5 && strings.HasPrefix(post, "cgroup2 ") {
			return fields[4], nil
		}
	}
	return "", errors.New("no cgroup v2 file system is mounted")
}

// ownCgroup is this process's cgroup v2 path, relative to the hierarchy's root.
func ownCgroup() (string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if path, ok := strings.CutPrefix(line, "0::"); ok {
			return path, nil
		}
	}
	return "", errors.New("this process is in no cgroup v2")
}
