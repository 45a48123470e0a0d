package supervisor

import (
	"encoding/json"
	"io"
)

// Report is what the guard tells the supervisor over its report pipe: one JSON object per line,
// first the command's PID once it runs, last the outcome. The guard's own exit status cannot carry
// this: it is one byte, and it cannot tell "the command exited 127" from "the command could not
// be started".
type Report struct {
	// PID is the command's process ID, also its process group's.
	PID int `json:"pid,omitempty"`
	// Cgroup is the directory of the cgroup holding the command and all it starts ("" without
	// one).
	Cgroup string `json:"cgroup,omitempty"`
	// Done marks the final report: the fields below are set.
	Done bool `json:"done,omitempty"`
	// ExitCode is the command's own exit code (128+N for signal N).
	ExitCode int `json:"exit_code"`
	// StartError says why the command could not be started ("" when it was); ExitCode is then
	// 127 (not found) or 126 (not executable).
	StartError string `json:"start_error,omitempty"`
	// Terminated and Killed count the processes other than the command itself that were sent
	// SIGTERM and, once the grace period was over, SIGKILL.
	Terminated int `json:"terminated"`
	Killed     int `json:"killed"`
	// CommandKilled: the command itself needed SIGKILL.
	CommandKilled bool `json:"command_killed,omitempty"`
}

// sendReport writes r as one line; a supervisor that is gone is no reason to fail.
func sendReport(w io.Writer, r Report) {
	if w == nil {
		return
	}
	line, _ := json.Marshal(r)
	_, _ = w.Write(append(line, '\n'))
}
