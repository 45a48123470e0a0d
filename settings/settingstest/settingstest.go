//go:build linux

// Package settingstest holds what the process tests of the CLI and the deployer share to check
// [settings.ReadFile]'s rule on the built programs: the paths a setting's file must not be, and
// a runner that gives a process a deadline, a signal and a memory cap, and reports its peak
// memory.
package settingstest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Case is a path that a setting may name and that the program must refuse.
type Case struct {
	// Name names the case in subtests, e.g. "fifo".
	Name string
	// Path is the path to give the setting.
	Path string
	// Problem is what the refusal says of the file (settings.FileError.Problem).
	Problem string
}

// BadFiles makes, in a temporary directory of t, one path of each kind that a setting's file
// must not be, against a reader's limit: /dev/zero (endless), a named pipe with no writer (its
// open(2) blocks), a directory, and a sparse file of 1 GiB (larger than limit, cheap to make).
func BadFiles(t testing.TB, limit int64) []Case {
	t.Helper()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "dir")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if limit >= 1<<30 {
		t.Fatalf("settingstest: limit %d is not below the 1 GiB file", limit)
	}
	return []Case{
		{Name: "dev-zero", Path: "/dev/zero", Problem: "is a character device, not a regular file"},
		{Name: "fifo", Path: fifo, Problem: "is a named pipe (FIFO), not a regular file"},
		{Name: "directory", Path: sub, Problem: "is a directory, not a regular file"},
		{Name: "over-limit", Path: huge, Problem: "is larger than "},
	}
}

// SymlinkTo writes content into a file of a temporary directory and returns a symbolic link to
// it: how a mounted secret often looks (Kubernetes' and Swarm's secrets are links), and a form
// the rule accepts.
func SymlinkTo(t testing.TB, content string) string {
	t.Helper()
	dir := t.TempDir()
	target := filepath.Join(dir, "value")
	if err := os.WriteFile(target, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// Result is a finished process.
type Result struct {
	// Code is the exit code, or -1 when a signal ended the process.
	Code           int
	Stdout, Stderr string
	// MaxRSS is the process's peak resident memory in bytes, as far as it can be known: the
	// kernel's count (ru_maxrss) when it is above this process's own peak at the child's exec —
	// Linux carries the parent's peak at the exec into a child's count, so that below it the
	// count says nothing of the child — else the highest the watch sampled.
	MaxRSS int64
}

// Brief is Stderr cut to its first 2 KiB, for a test's message: a program that ran out of
// memory prints every goroutine's stack.
func (r Result) Brief() string {
	if len(r.Stderr) <= 2048 {
		return r.Stderr
	}
	return r.Stderr[:2048] + "…"
}

// MemoryCap is the resident memory a process of Run may reach: far above what the programs
// need (some 20 MiB), far below what reading /dev/zero or 1 GiB whole takes. A program that
// reads without a bound is killed there, and the test fails, instead of taking the machine's
// memory. (An address-space limit cannot serve: a Go program reserves more than a GiB of it
// from the start, and more with each thread.)
const MemoryCap = 256 << 20

// Grace is how long a process may take to end after SIGTERM.
const Grace = 5 * time.Second

// Run runs cmd (its Path, Args, Dir and Env set; its output not). It fails t if the process
// has not exited within deadline, or has not ended within Grace of the SIGTERM that then
// follows (a process blocked where a signal it handles cannot reach it), or if its resident
// memory passes MemoryCap; it then kills the process. No sleep paces it: it waits for the exit,
// watching the memory every few milliseconds, until the deadline.
func Run(t testing.TB, cmd *exec.Cmd, deadline time.Duration) Result {
	t.Helper()
	name := filepath.Base(cmd.Path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	inherited := ownPeak()
	var sampled int64
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The peak carried into the child is this process's at the exec, which Start waits for
	// (it may have grown since the line above, tests running beside).
	inherited = max(inherited, ownPeak())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	watch := time.NewTicker(5 * time.Millisecond)
	defer watch.Stop()
	timeout, grace := time.After(deadline), (<-chan time.Time)(nil)
	var waitErr error
wait:
	for {
		select {
		case waitErr = <-done:
			break wait
		case <-watch.C:
			rss := resident(cmd.Process.Pid)
			sampled = max(sampled, rss)
			if rss > MemoryCap {
				t.Errorf("%s holds %d MiB: it reads without a bound; killed", name, rss>>20)
				_ = cmd.Process.Kill()
				watch.Stop()
			}
		case <-timeout:
			t.Errorf("%s still running after %v: it must exit at once", name, deadline)
			_ = cmd.Process.Signal(syscall.SIGTERM)
			grace = time.After(Grace)
		case <-grace:
			t.Errorf("%s still running %v after SIGTERM: a signal must end it; killed", name, Grace)
			_ = cmd.Process.Kill()
		}
	}
	r := Result{Code: cmd.ProcessState.ExitCode(), Stdout: stdout.String(), Stderr: stderr.String()}
	r.MaxRSS = sampled
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss<<10 > inherited {
		r.MaxRSS = ru.Maxrss << 10 // Linux counts KiB
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		t.Fatalf("%s: %v", name, waitErr)
	}
	return r
}

// ownPeak is this process's peak resident memory in bytes (VmHWM), 0 where /proc has none.
func ownPeak() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kib << 10
		}
	}
	return 0
}

// resident is the resident memory of process pid in bytes (0 once it is gone), from
// /proc/PID/statm: its second field counts pages.
func resident(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(fields[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
