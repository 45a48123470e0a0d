package supervisor

import (
	"encoding/json"
	"io"
)

// Report is what the guard tells the supervisor over its report pipe: one JSON object per line,
// first the command's PID once it runs, then — when it stops the command — an acknowledgement
// and the counts as they grow, last the outcome. The guard's own exit status cannot carry
// this: it is one byte, and it cannot tell "the command exited 127" from "the command could not
// be started".
type Report struct {
	// PID is the command's process ID, also its process group's.
	PID int `json:"pid,omitempty"`
	// Cgroup is the directory of the cgroup holding the command and all it starts ("" without
	// one).
	Cgroup string `json:"cgroup,omitempty"`
	// Stopping: the guard has begun to stop the command (it says so before its first signal).
	// The counts below are then those so far, for a supervisor that must finish the job.
	Stopping bool `json:"stopping,omitempty"`
	// Done marks the final report: the fields below are set.
	Done bool `json:"done,omitempty"`
	// StoppedBy is what made the guard stop the command (StopSignal, StopDeadline,
	// StopSupervisorGone, StopExit), "" when nothing had to be stopped.
	StoppedBy string `json:"stopped_by,omitempty"`
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

// What made the guard stop the command (Report.StoppedBy).
const (
	// StopSignal: the guard was told to stop (SIGTERM or SIGINT, also the kernel's
	// parent-death signal).
	StopSignal = "signal"
	// StopDeadline: the term's deadline came, by the guard's own clock, before a renewal moved
	// it; the command never started if it had come already.
	StopDeadline = "deadline"
	// StopSupervisorGone: the control pipe ended: run exited or died.
	StopSupervisorGone = "supervisor gone"
	// StopExit: the command exited by itself while something it started still ran.
	StopExit = "exit"
)

// sendReport writes r as one line; a supervisor that is gone is no reason to fail.
func sendReport(w io.Writer, r Report) {
	if w == nil {
		return
	}
	line, _ := json.Marshal(r)
	_, _ = w.Write(append(line, '\n'))
}
