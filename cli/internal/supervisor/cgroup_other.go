//go:build unix && !linux

package supervisor

import (
	"errors"
	"syscall"
)

// cgroup exists on Linux only.
type cgroup struct{ dir string }

func newCgroup() (*cgroup, error) { return nil, errors.New("cgroups are Linux-only") }

func guardCgroupDir(int) (string, error) { return "", errors.New("cgroups are Linux-only") }

func (c *cgroup) intoCgroup(*syscall.SysProcAttr) {}

func (c *cgroup) close() {}

func cgroupMembers(string) []process { return nil }

func killCgroup(string) int { return 0 }

func removeCgroup(string) int { return 0 }
