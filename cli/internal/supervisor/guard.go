//go:build unix

package supervisor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// OpenReport opens the report pipe the supervisor passed as fd. The command does not inherit it:
// the supervisor must see it end when the guard exits.
func OpenReport(fd int) *os.File { return openGuardPipe(fd, "report") }

// OpenTerm opens a standby guard's term pipe, which the supervisor passed as fd. The command
// does not inherit it either.
func OpenTerm(fd int) *os.File { return openGuardPipe(fd, "term") }

func openGuardPipe(fd int, name string) *os.File {
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), name)
}

// reapInterval is how often a stopping guard looks for descendants it has not yet signalled:
// a process orphaned by the death of its parent, or one that was still being forked.
const reapInterval = 20 * time.Millisecond

// Guard is the guard process's main: it starts the command in its own process group (the guard
// leads it) and, when it can, in a cgroup of its own; it reaps every descendant (it is a child
// subreaper), and stops all of them — SIGTERM, the grace period, SIGKILL — when it is told to
// stop (SIGTERM/SIGINT, also sent by the kernel when the supervisor dies) or when the command
// exits while others remain. "All" is every process in the group, every descendant found in
// /proc (also those that left the group or the session) and, with a cgroup, every process in
// it. It returns the command's own exit code, and reports the details to o.Report.
func Guard(o GuardOptions) int {
	if len(o.Argv) == 0 {
		fmt.Fprintln(os.Stderr, "child-guard: no command")
		return 2
	}
	// The supervisor may have died between fork and the parent-death signal taking effect.
	if o.Parent != 0 && os.Getppid() != o.Parent {
		return 1
	}
	becomeSubreaper()

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)

	g := &guard{self: os.Getpid(), grace: o.Grace, signalled: map[int]syscall.Signal{}}
	if o.Cgroup {
		if cg, err := newCgroup(); err == nil {
			g.cgroup = cg
		}
	}
	defer g.removeCgroup()
	env := os.Environ()
	if o.Term != nil {
		// A standby: the cgroup is made already, and the runtime's first-start check done,
		// so that only the start itself is left for the term.
		warmProcessStart()
		var ok bool
		if env, ok = awaitTerm(o.Term, sigs); !ok {
			return 0 // no term: an idle guard has nothing to stop
		}
	}
	proc, startErr := g.start(o.Argv, env)
	if startErr != nil {
		var se *StartError
		errors.As(startErr, &se)
		fmt.Fprintf(os.Stderr, "child-guard: %v\n", startErr)
		sendReport(o.Report, Report{Done: true, ExitCode: se.Code, StartError: startErr.Error()})
		return se.Code
	}
	g.main = proc.Pid
	first := Report{PID: proc.Pid}
	if g.cgroup != nil {
		first.Cgroup = g.cgroup.dir
	}
	sendReport(o.Report, first)
	r := g.supervise(sigs)
	sendReport(o.Report, r)
	return r.ExitCode
}

// guard is the state of one guard process.
type guard struct {
	self, main int
	grace      time.Duration
	cgroup     *cgroup
	// signalled remembers the strongest signal sent to each process.
	signalled map[int]syscall.Signal
	// exited: the command has been reaped (its PID may be reused).
	exited bool
	// groupSignal is the last signal sent to the command's process group.
	groupSignal syscall.Signal
}

// start starts the command as the leader of a new process group, inside the cgroup when there
// is one (falling back to none if the kernel refuses to start a process in it). The group is not
// the guard's own: the guard signals it, and must not SIGKILL itself.
func (g *guard) start(argv, env []string) (*os.Process, error) {
	path, err := Resolve(argv[0])
	if err != nil {
		return nil, err
	}
	attr := &os.ProcAttr{Env: env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}}
	if g.cgroup != nil {
		attr.Sys = &syscall.SysProcAttr{Setpgid: true}
		g.cgroup.intoCgroup(attr.Sys)
		proc, err := os.StartProcess(path, argv, attr)
		g.cgroup.close()
		if err == nil {
			return proc, nil
		}
		g.removeCgroup()
	}
	attr.Sys = &syscall.SysProcAttr{Setpgid: true}
	proc, err := os.StartProcess(path, argv, attr)
	if err != nil {
		code := ExitNotExecutable
		if errors.Is(err, os.ErrNotExist) { // e.g. removed meanwhile, or a missing #! interpreter
			code = ExitNotFound
		}
		return nil, &StartError{Command: argv[0], Code: code, Err: err}
	}
	return proc, nil
}

// warmProcessStart makes, ahead of the term, the check Go's runtime makes once per process at
// its first process start on Linux: that pidfd system calls work, which includes starting a
// child of its own that exits at once (clone with CLONE_PIDFD; 0.2–0.3 ms at the median on the
// benchmark machine, over 1 ms at busy moments). os.FindProcess makes the same check.
func warmProcessStart() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Release()
	}
}

// termReadSize is the first read's buffer for the term message: more than most environments.
const termReadSize = 64 << 10

// awaitTerm waits, as a standby guard, for the term on r: the command's environment. ok is
// false when r ends without one (the supervisor closed it: no term for this guard), cannot be
// read, or the guard is told to stop first.
func awaitTerm(r io.Reader, sigs <-chan os.Signal) (env []string, ok bool) {
	type term struct {
		msg termMessage
		err error
	}
	got := make(chan term, 1)
	go func() {
		var t term
		// One read takes the whole message (run writes it at once); a decoder would read
		// 512 bytes, parse, and read again, each read a wake-up of this goroutine.
		var msg bytes.Buffer
		msg.Grow(termReadSize)
		_, t.err = msg.ReadFrom(r)
		switch {
		case t.err != nil:
		case msg.Len() == 0:
			t.err = io.EOF
		default:
			t.err = json.Unmarshal(msg.Bytes(), &t.msg)
		}
		got <- t
	}()
	select {
	case <-sigs:
		return nil, false
	case t := <-got:
		if t.err != nil {
			if !errors.Is(t.err, io.EOF) {
				fmt.Fprintf(os.Stderr, "child-guard: unreadable term: %v\n", t.err)
			}
			return nil, false
		}
		return t.msg.Env, true
	}
}

// supervise reaps until no descendant is left, stopping them all when told to or when the
// command exits.
func (g *guard) supervise(sigs <-chan os.Signal) Report {
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

	r := Report{Done: true, ExitCode: -1}
	var sweep <-chan time.Time
	var kill <-chan time.Time
	sig := syscall.Signal(0)
	stop := func() {
		if sig != 0 {
			return
		}
		sig = syscall.SIGTERM
		kill = time.After(g.grace)
		ticker := time.NewTicker(reapInterval)
		sweep = ticker.C
		// Not the /proc scan yet: it takes milliseconds on a busy host, and the command,
		// which usually exits within them, would wait for it to be reaped (the guard's one
		// loop), while the lease stays held. The sweeps scan.
		g.signalAll(sig, false)
	}
	for {
		select {
		case <-sigs:
			stop()
		case <-kill:
			sig = syscall.SIGKILL
			g.signalAll(sig, true)
		case <-sweep:
			g.signalAll(sig, true)
		case ex := <-exits:
			if ex.pid == g.main {
				// What the command started must not outlive it as a headless leader.
				g.exited = true
				r.ExitCode = statusCode(ex.status)
				stop()
			}
		case <-reaped:
			for len(exits) > 0 {
				if ex := <-exits; ex.pid == g.main {
					r.ExitCode = statusCode(ex.status)
				}
			}
			for pid, s := range g.signalled {
				switch {
				case pid == g.main:
					r.CommandKilled = s == syscall.SIGKILL
				case s == syscall.SIGKILL:
					r.Killed++
					r.Terminated++
				default:
					r.Terminated++
				}
			}
			return r
		}
	}
}

// signalAll sends sig once to the command's process group and to every descendant outside it
// that has not had sig yet, and — for SIGKILL — to the whole cgroup. A process is sent each
// signal once: a command that handles SIGTERM to shut down gracefully must not get a stream of
// them.
//
// The descendants are found by a scan of /proc (every process of the host), or, without scan
// and when the command has a cgroup, from the cgroup's member list: every process the command
// started, whatever it did with groups and sessions, in one read. Only a privileged process
// can move itself out of the cgroup; the next scan finds it.
func (g *guard) signalAll(sig syscall.Signal, scan bool) {
	groupNow := g.groupSignal != sig
	if groupNow {
		g.groupSignal = sig
		_ = syscall.Kill(-g.main, sig)
		if !g.exited {
			g.signalled[g.main] = sig
		}
	}
	var procs []process
	if scan || g.cgroup == nil {
		procs = descendants(g.self)
	} else {
		procs = cgroupMembers(g.cgroup.dir)
	}
	for _, p := range procs {
		switch {
		case g.signalled[p.pid] == sig:
		case groupNow && p.pgid == g.main: // just reached through the group
			g.signalled[p.pid] = sig
		case syscall.Kill(p.pid, sig) == nil:
			g.signalled[p.pid] = sig
		}
	}
	if sig == syscall.SIGKILL && g.cgroup != nil {
		killCgroup(g.cgroup.dir)
	}
}

// removeCgroup removes the command's cgroup, killing anything still in it.
func (g *guard) removeCgroup() {
	if g.cgroup != nil {
		g.cgroup.close()
		removeCgroup(g.cgroup.dir)
		g.cgroup = nil
	}
}

func statusCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
