//go:build unix

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// Guard is the guard process's main: it starts argv in its own process group (the guard leads
// it), reaps every descendant, and stops the whole group — SIGTERM, grace, SIGKILL — when it is
// told to stop (SIGTERM/SIGINT, also sent by the kernel when the supervisor dies) or when the
// main child exits while others of the group remain. It returns the main child's exit code.
func Guard(argv []string, grace time.Duration, parent int) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "child-guard: no command")
		return 2
	}
	// The supervisor may have died between fork and the parent-death signal taking effect.
	if parent != 0 && os.Getppid() != parent {
		return 1
	}
	becomeSubreaper()

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)

	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "child-guard: %v\n", err)
		return 127
	}
	proc, err := os.StartProcess(path, argv, &os.ProcAttr{
		Env:   os.Environ(),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "child-guard: start %s: %v\n", argv[0], err)
		return 126
	}
	mainPID := proc.Pid

	type exit struct {
		pid    int
		status syscall.WaitStatus
	}
	exits := make(chan exit, 16)
	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil { // ECHILD: no descendants left
				return
			}
			exits <- exit{pid, ws}
		}
	}()

	code := -1
	stopping := false
	var kill <-chan time.Time
	stop := func() {
		if stopping {
			return
		}
		stopping = true
		_ = syscall.Kill(0, syscall.SIGTERM) // the whole group; this process ignores it (Notify)
		kill = time.After(grace)
	}
	for {
		select {
		case <-sigs:
			stop()
		case <-kill:
			signal.Reset()
			_ = syscall.Kill(0, syscall.SIGKILL) // the group, this process included
		case ex := <-exits:
			if ex.pid == mainPID {
				// What the child started must not outlive it as a headless leader.
				code = statusCode(ex.status)
				stop()
			}
		case <-reaped:
			for len(exits) > 0 {
				if ex := <-exits; ex.pid == mainPID {
					code = statusCode(ex.status)
				}
			}
			return code
		}
	}
}

func statusCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
