//go:build unix

package supervisor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// OpenReport opens the report pipe the supervisor passed as fd. The command does not inherit it:
// the supervisor must see it end when the guard exits.
func OpenReport(fd int) *os.File { return openGuardPipe(fd, "report") }

// OpenTerm opens a standby guard's term pipe, which the supervisor passed as fd. The command
// does not inherit it either.
func OpenTerm(fd int) *os.File { return openGuardPipe(fd, "term") }

// OpenHold opens the incarnation's lock, which the supervisor passed as fd; the command
// inherits it as its file descriptor 3 (GuardOptions.Hold), not as fd.
func OpenHold(fd int) *os.File { return openGuardPipe(fd, "incarnation lock") }

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
// stop (SIGTERM/SIGINT, also sent by the kernel when the supervisor dies), when the control pipe
// ends (the supervisor is gone), when the term's deadline comes by its own clock — the grace
// period before it, unless the supervisor sent a later one — and when the command exits while
// others remain. "All" is every process in the group, every descendant found in /proc (also
// those that left the group or the session) and, with a cgroup, every process in it. It
// returns the command's own exit code, and reports the details to o.Report.
//
// The guard writes nothing on the streams it shares with the command: a reader of stderr that
// stopped reading must not stop the guard. What goes wrong travels in its reports.
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

	g := &guard{self: os.Getpid(), grace: o.Grace, signalled: map[int]syscall.Signal{}, report: o.Report, hold: o.Hold}
	if o.Cgroup {
		if cg, err := newCgroup(); err == nil {
			g.cgroup = cg
		}
	}
	defer g.removeCgroup()
	env := os.Environ()
	var deadline Deadline
	var deadlines <-chan Deadline
	quit := make(chan struct{})
	defer close(quit)
	if o.Term != nil {
		// The cgroup is made already, and the runtime's first-start check done, so that only
		// the start itself is left for the term.
		warmProcessStart()
		control := newControlReader(o.Term)
		term, ok := awaitTerm(control, sigs)
		if !ok {
			return 0 // no term: an idle guard has nothing to stop
		}
		env, deadline = term.envStrings(), Deadline{ns: term.Deadline}
		deadlines = control.deadlines(quit)
		// A stop that arrived with the term (a stopped idle guard continued during run's Stop)
		// wins: the term is over already.
		select {
		case <-sigs:
			return 0
		default:
		}
	}
	if !deadline.IsZero() && deadline.Until() <= g.grace {
		// Too late to start: the command could not be stopped by the deadline.
		g.send(Report{Done: true, ExitCode: -1, StoppedBy: StopDeadline})
		return 0
	}
	proc, startErr := g.start(o.Argv, env)
	if startErr != nil {
		var se *StartError
		errors.As(startErr, &se)
		g.send(Report{Done: true, ExitCode: se.Code, StartError: startErr.Error()})
		return se.Code
	}
	g.main = proc.Pid
	first := Report{PID: proc.Pid}
	if g.cgroup != nil {
		first.Cgroup = g.cgroup.dir
	}
	g.send(first)
	r := g.supervise(sigs, deadline, deadlines)
	g.send(r)
	return r.ExitCode
}

// guard is the state of one guard process.
type guard struct {
	self, main int
	grace      time.Duration
	cgroup     *cgroup
	// hold is the incarnation's lock, passed on to the command (nil: none).
	hold *os.File
	// signalled remembers the strongest signal sent to each process.
	signalled map[int]syscall.Signal
	// exited: the command has been reaped (its PID may be reused).
	exited bool
	// groupSignal is the last signal sent to the command's process group.
	groupSignal syscall.Signal
	// report receives the reports (nil: none); sent is the last progress report handed to
	// progress, which writes it without holding up the loop.
	report   io.Writer
	sent     Report
	progress *latestReport
}

// send writes r to the supervisor; one that is gone is no reason to fail. Only the first
// report (the PID) and the final one are written so: the supervisor reads them at once, and
// once the final one is written nothing is left to stop.
func (g *guard) send(r Report) { sendReport(g.report, r) }

// latestReport writes the newest of the progress reports handed to it, from a goroutine of its
// own: a supervisor that does not read (stopped) fills the pipe, and the guard's loop — its
// SIGKILL timer, its reaping — must not wait for it. An older report not yet written is
// replaced; only the newest counts say what was done.
type latestReport struct {
	w       io.Writer
	mu      sync.Mutex
	pending *Report
	wake    chan struct{}
}

func newLatestReport(w io.Writer) *latestReport {
	l := &latestReport{w: w, wake: make(chan struct{}, 1)}
	go l.run()
	return l
}

func (l *latestReport) send(r Report) {
	l.mu.Lock()
	l.pending = &r
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *latestReport) run() {
	for range l.wake {
		l.mu.Lock()
		r := l.pending
		l.pending = nil
		l.mu.Unlock()
		if r != nil {
			sendReport(l.w, *r) // a line is below PIPE_BUF: written whole, never interleaved
		}
	}
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
	if own := g.commandHold(); own != nil {
		if own != g.hold {
			defer own.Close() // the command has its copy
		}
		attr.Files = append(attr.Files, own)
	}
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

// commandHold is the command's own lock on the incarnation's lock file: a new open file
// description of it (reopened through /proc), locked shared, so that the command can release
// only its own lock — never run's and the guard's, which the guard holds for as long as it lives.
// Where the file cannot be reopened so, the command shares the guard's. Nil without a lock.
func (g *guard) commandHold() *os.File {
	if g.hold == nil {
		return nil
	}
	own, err := os.Open("/proc/self/fd/" + strconv.Itoa(int(g.hold.Fd())))
	if err != nil {
		return g.hold
	}
	if err := syscall.Flock(int(own.Fd()), syscall.LOCK_SH); err != nil {
		own.Close()
		return g.hold
	}
	return own
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

// awaitTerm waits, as a standby guard, for the term on c. ok is false when the pipe ends
// without one (the supervisor closed it: no term for this guard), cannot be read, or the guard
// is told to stop first.
func awaitTerm(c *controlReader, sigs <-chan os.Signal) (term controlMessage, ok bool) {
	type result struct {
		msg controlMessage
		err error
	}
	got := make(chan result, 1)
	go func() {
		msg, err := c.next()
		got <- result{msg, err}
	}()
	select {
	case <-sigs:
		return term, false
	case r := <-got:
		return r.msg, r.err == nil && r.msg.Term
	}
}

// supervise reaps until no descendant is left, stopping them all when told to, when the
// supervisor is gone (deadlines ends), when the deadline comes — grace before it, so that
// SIGKILL is sent by then — and when the command exits.
func (g *guard) supervise(sigs <-chan os.Signal, deadline Deadline, deadlines <-chan Deadline) Report {
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

	// The deadline is measured on this process's own timer: run may be stopped, or blocked.
	due := time.NewTimer(time.Hour)
	due.Stop()
	defer due.Stop()
	arm := func(d Deadline) {
		due.Stop()
		if !d.IsZero() {
			due.Reset(max(d.Until()-g.grace, 0))
		}
	}
	arm(deadline)

	r := Report{Done: true, ExitCode: -1}
	var sweep <-chan time.Time
	var kill <-chan time.Time
	sig := syscall.Signal(0)
	stop := func(by string) {
		if sig != 0 {
			return
		}
		r.StoppedBy = by
		// Acknowledged before the first signal: the supervisor leaves the stop to the guard
		// only once it knows the guard is at it.
		g.sendProgress()
		sig = syscall.SIGTERM
		// SIGKILL after the grace period. A stop that begins on time ends by the deadline; one
		// that begins late — the whole tree thawed after it — still gives the command its
		// grace: nothing could stop it while it was frozen, and the fence covers that window.
		kill = time.After(g.grace)
		ticker := time.NewTicker(reapInterval)
		sweep = ticker.C
		// Not the /proc scan yet: it takes milliseconds on a busy host, and the command,
		// which usually exits within them, would wait for it to be reaped (the guard's one
		// loop), while the lease stays held. The sweeps scan.
		g.signalAll(sig, false)
		g.sendProgress()
	}
	for {
		select {
		case <-sigs:
			stop(StopSignal)
		case d, ok := <-deadlines:
			if !ok {
				deadlines = nil
				stop(StopSupervisorGone)
				continue
			}
			if sig == 0 && !d.IsZero() { // run never sends none after the term; ignore one
				arm(d)
			}
		case <-due.C:
			stop(StopDeadline)
		case <-kill:
			sig = syscall.SIGKILL
			g.signalAll(sig, true)
			g.sendProgress()
		case <-sweep:
			g.signalAll(sig, true)
			g.sendProgress()
		case ex := <-exits:
			if ex.pid == g.main {
				// What the command started must not outlive it as a headless leader.
				g.exited = true
				r.ExitCode = statusCode(ex.status)
				stop(StopExit)
			}
		case <-reaped:
			for len(exits) > 0 {
				if ex := <-exits; ex.pid == g.main {
					r.ExitCode = statusCode(ex.status)
				}
			}
			g.count(&r)
			if r.StoppedBy == StopExit && len(g.signalled) == 0 {
				r.StoppedBy = "" // the command exited alone: nothing was stopped
			}
			return r
		}
	}
}

// count fills r's counts from the signals sent so far.
func (g *guard) count(r *Report) {
	r.CommandKilled, r.Terminated, r.Killed = false, 0, 0
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
}

// sendProgress tells the supervisor the counts so far when they changed: should the guard be
// killed before its final report, the supervisor still knows what it did.
func (g *guard) sendProgress() {
	p := Report{Stopping: true}
	g.count(&p)
	if p != g.sent {
		g.sent = p
		if g.progress == nil {
			g.progress = newLatestReport(g.report)
		}
		g.progress.send(p)
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
