package supervisor

import (
	"bytes"
	"os"
	"strconv"
)

// process is one live process of /proc.
type process struct{ pid, ppid, pgid int }

// descendants lists the live processes whose chain of parents reaches root, from /proc. As a
// child subreaper the guard is the parent of every orphan among them, so this finds also those
// that left the process group or the session (setsid, a double-forked daemon).
func descendants(root int) []process { return processTree(root, 0) }

// groupMembers lists the live processes of the process group pgid.
func groupMembers(pgid int) []process { return processTree(0, pgid) }

// processTree lists, from one scan of /proc, the live descendants of root and the live members
// of the process group pgid (either 0: none).
func processTree(root, pgid int) []process {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	procs := map[int]process{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProcess(pid); ok {
			procs[pid] = p
		}
	}
	var out []process
	for _, proc := range procs {
		if pgid > 0 && proc.pgid == pgid {
			out = append(out, proc)
			continue
		}
		for p, hops := proc.ppid, 0; root > 0 && p > 1 && hops < len(procs); p, hops = procs[p].ppid, hops+1 {
			if p == root {
				out = append(out, proc)
				break
			}
		}
	}
	return out
}

// readProcess reads the parent and process group of a live process; zombies are skipped (they
// run nothing and only wait to be reaped).
func readProcess(pid int) (process, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return process{}, false
	}
	// The command name (field 2) may hold spaces and parentheses: the fields after its last ')'
	// are state, ppid, pgrp, ...
	rest := bytes.Fields(data[bytes.LastIndexByte(data, ')')+1:])
	if len(rest) < 3 || rest[0][0] == 'Z' || rest[0][0] == 'X' {
		return process{}, false
	}
	ppid, err1 := strconv.Atoi(string(rest[1]))
	pgid, err2 := strconv.Atoi(string(rest[2]))
	return process{pid: pid, ppid: ppid, pgid: pgid}, err1 == nil && err2 == nil
}
