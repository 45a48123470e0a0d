package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// flushCalls are the system calls counted as flushes: every call that asks the kernel to make
// written data durable.
var flushCalls = []string{"fsync", "fdatasync", "syncfs", "sync", "sync_file_range", "msync"}

// proc is a target's server process, started directly or under strace.
type proc struct {
	cmd *exec.Cmd
	// pid is the server's own process: cmd's, or strace's tracee when counting.
	pid int
	// summary is strace's -c output file; empty when not counting.
	summary string
	out     *logBuffer
	done    chan struct{}
}

// startProc starts bin with args and env (added to a minimal environment); when counting,
// under strace with a seccomp filter, so that only the flush calls stop the process.
func startProc(c config, dir string, counting bool, bin string, args, env []string) (*proc, error) {
	p := &proc{out: &logBuffer{}, done: make(chan struct{})}
	argv := append([]string{bin}, args...)
	if counting {
		p.summary = filepath.Join(dir, "strace-summary.txt")
		argv = append([]string{c.strace, "-f", "--seccomp-bpf", "-c", "-o", p.summary,
			"-e", "trace=" + strings.Join(flushCalls, ",")}, argv...)
	}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a group of its own, for stop
	p.cmd.WaitDelay = 5 * time.Second                       // a descendant holding the output does not block Wait
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	p.pid = p.cmd.Process.Pid
	if counting {
		pid, err := p.tracee(bin)
		if err != nil {
			_ = p.stop()
			return nil, err
		}
		p.pid = pid
	}
	return p, nil
}

// tracee waits for strace's child that runs bin, the server. strace may start a helper child
// first (seen with --seccomp-bpf), and its child runs strace itself until it execs bin: only a
// child whose command line names bin is the server.
func (p *proc) tracee(bin string) (int, error) {
	path := fmt.Sprintf("/proc/%d/task/%d/children", p.cmd.Process.Pid, p.cmd.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		data, _ := os.ReadFile(path)
		for _, field := range strings.Fields(string(data)) {
			pid, err := strconv.Atoi(field)
			if err != nil {
				return 0, fmt.Errorf("%s: %q", path, data)
			}
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if argv0, _, _ := bytes.Cut(cmdline, []byte{0}); string(argv0) == bin {
				return pid, nil
			}
		}
		select {
		case <-p.done:
			return 0, fmt.Errorf("strace exited: %s", p.out.String())
		case <-time.After(5 * time.Millisecond): // poll interval of /proc
		}
	}
	return 0, fmt.Errorf("strace started no %s within 10 s", bin)
}

// stop ends the server and waits for it (and strace, which writes its summary when its tracee
// ends): SIGTERM, then SIGKILL of the server after 10 s (a traced serve was seen to miss its
// SIGTERM), then of the whole group (anything the server started).
func (p *proc) stop() error {
	for i, kill := range []func() error{
		func() error { return syscall.Kill(p.pid, syscall.SIGTERM) },
		func() error { return syscall.Kill(p.pid, syscall.SIGKILL) },
		func() error { return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) },
	} {
		_ = kill()
		select {
		case <-p.done:
			return nil
		case <-time.After(10 * time.Second):
		}
		if i == 0 { // the run's figures stand: say so, and go on
			fmt.Fprintf(os.Stderr, "warning: %s (pid %d) did not stop within 10 s of SIGTERM\n", filepath.Base(p.cmd.Path), p.pid)
		}
	}
	return fmt.Errorf("%s (pid %d) survived SIGKILL for 10 s", filepath.Base(p.cmd.Path), p.pid)
}

// waitLog waits until the server's output matches find, which returns what it extracted.
func (p *proc) waitLog(ctx context.Context, what string, find func(string) string) (string, error) {
	for deadline := time.Now().Add(30 * time.Second); ; {
		if v := find(p.out.String()); v != "" {
			return v, nil
		}
		select {
		case <-p.done:
			return "", fmt.Errorf("exited before %s:\n%s", what, p.out.String())
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(10 * time.Millisecond): // poll interval of the log
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no %s within 30 s:\n%s", what, p.out.String())
		}
	}
}

// cpu returns the server's user + system CPU time so far; 0 in a counting run, whose CPU is
// strace's as much as the server's (and whose traced process may be one the server started).
func (p *proc) cpu() (time.Duration, error) {
	if p.summary != "" {
		return 0, nil
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		select {
		case <-p.done: // it ended: what it said last is why
			return 0, fmt.Errorf("%s (pid %d) exited during the run (%v); its output ends:\n%s",
				filepath.Base(p.cmd.Path), p.pid, p.cmd.ProcessState, tail(p.out.String(), 4096))
		default:
			return 0, err
		}
	}
	// The command name, field 2, is in parentheses and may hold spaces: count after it.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", p.pid, data)
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime, stime
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / clockTicks), nil
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux ABI.
const clockTicks = 100

// flushes returns the flush calls strace counted over the server's life.
func (p *proc) flushes() (int, error) {
	data, err := os.ReadFile(p.summary)
	if err != nil {
		return 0, fmt.Errorf("strace summary: %w", err)
	}
	counted := map[string]bool{}
	for _, name := range flushCalls {
		counted[name] = true
	}
	if len(bytes.TrimSpace(data)) == 0 && p.cmd.ProcessState != nil && p.cmd.ProcessState.Success() {
		return 0, nil // strace ended normally and saw no flush call: it writes no table then
	}
	if !strings.Contains(string(data), " total") {
		// strace writes the table when its tracee has ended; a killed strace leaves none.
		return 0, fmt.Errorf("strace summary %s has no table", p.summary)
	}
	total := 0
	// Rows: % time, seconds, usecs/call, calls, [errors,] syscall.
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) < 5 || !counted[f[len(f)-1]] {
			continue
		}
		n, err := strconv.Atoi(f[3])
		if err != nil {
			return 0, fmt.Errorf("strace summary %q: %w", line, err)
		}
		total += n
	}
	return total, nil
}

// logBuffer collects a process's output for the goroutines that read it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 1<<20 { // keep the start (the listen address) and bound the rest
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
