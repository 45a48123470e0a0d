package supervisor

import (
	"bytes"
	"os"
	"strconv"
)

// descendants lists the live processes whose chain of parents reaches root, from /proc. As a
// child subreaper the guard is the parent of every orphan among them, so this finds also those
// that left the process group or the session (setsid, a double-forked daemon).
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	parent := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			parent[pid] = ppid
		}
	}
	var out []int
	for pid := range parent {
		for p, hops := parent[pid], 0; p > 1 && hops < len(parent); p, hops = parent[p], hops+1 {
			if p == root {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// parentOf reads the parent of a live process; zombies are skipped (they run nothing and only
// wait to be reaped).
func parentOf(pid int) (int, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces and parentheses: the fields after its last ')'
	// are state, ppid, ...
	rest := bytes.Fields(data[bytes.LastIndexByte(data, ')')+1:])
	if len(rest) < 2 || rest[0][0] == 'Z' || rest[0][0] == 'X' {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(rest[1]))
	return ppid, err == nil
}
