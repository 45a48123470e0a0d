//go:build unix && !linux

package supervisor

// process is one live process.
type process struct{ pid, ppid, pgid int }

// descendants needs /proc: elsewhere the guard relies on the process group alone.
func descendants(int) []process { return nil }

// groupMembers needs /proc: elsewhere the group is signalled as a whole.
func groupMembers(int) []process { return nil }

// processTree needs /proc.
func processTree(int, int) []process { return nil }
