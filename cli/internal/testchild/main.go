//go:build unix

// Command testchild is the child process of the supervisor tests. It appends one JSON line per
// event to the file named by TESTCHILD_LOG (start, stop, term-ignored, exit, grandchild), so a
// test — or a test reading a bind mount of a Swarm service — can check that no two children
// ran at once and which fence each had. It is static Go so that it runs in a FROM scratch image.
//
// Environment:
//
//	TESTCHILD_LOG            the event log (required)
//	TESTCHILD_IGNORE_TERM=1  ignore SIGTERM (the supervisor must SIGKILL after the grace)
//	TESTCHILD_EXIT_AFTER_MS  exit by itself after this long, with TESTCHILD_EXIT_CODE (default 0)
//	TESTCHILD_GRANDCHILD=1   start a grandchild (this binary, sleeping) and log its PID;
//	                         =setsid: the grandchild is in a session of its own; =daemon: a
//	                         double-forked daemon (an intermediate starts it with setsid, exits)
//	TESTCHILD_GRANDCHILD_IGNORE_TERM=1  the grandchild ignores SIGTERM
//	TESTCHILD_MODE=sleep     be that grandchild: sleep until killed (=daemonize: the intermediate)
//	TESTCHILD_EXCLUSIVE      a file every child locks (flock) for as long as it runs: a child that
//	                         finds it locked logs "overlap" — another child still runs — then
//	                         waits for the lock. The kernel drops the lock when its holder dies,
//	                         however it dies, so this sees every instant two children overlap.
//	TESTCHILD_HEARTBEAT_DIR  write the time (Unix ns) every 10 ms to DIR/<fence>-<pid>
//	TESTCHILD_FILL_STDERR    write this many bytes to stderr at start (a pipe nobody reads fills)
//	SIGUSR1                  log "alloc", then allocate and touch memory without end: under a
//	                         memory limit, until the kernel's OOM killer kills the process it
//	                         picks
//	SWARM_LEASE_FENCE, _HOLDER_ID, _TASK_ID, _NODE_ID, _NAMESPACE: logged with every event
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// Event is one line of the log.
type Event struct {
	Event     string `json:"event"`
	Fence     string `json:"fence"`
	HolderID  string `json:"holder_id"`
	TaskID    string `json:"task_id"`
	NodeID    string `json:"node_id"`
	Namespace string `json:"namespace,omitempty"`
	PID       int    `json:"pid"`
	Other     int    `json:"other_pid,omitempty"`
	Hostname  string `json:"hostname"`
	UnixNano  int64  `json:"t"`
}

func logEvent(name string, other int) {
	host, _ := os.Hostname()
	line, _ := json.Marshal(Event{
		Event: name, Fence: os.Getenv("SWARM_LEASE_FENCE"), HolderID: os.Getenv("SWARM_LEASE_HOLDER_ID"),
		TaskID: os.Getenv("SWARM_LEASE_TASK_ID"), NodeID: os.Getenv("SWARM_LEASE_NODE_ID"), Namespace: os.Getenv("SWARM_LEASE_NAMESPACE"),
		PID: os.Getpid(), Other: other, Hostname: host, UnixNano: time.Now().UnixNano(),
	})
	// One write of one line with O_APPEND: lines from concurrent children never interleave.
	f, err := os.OpenFile(os.Getenv("TESTCHILD_LOG"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testchild:", err)
		os.Exit(3)
	}
	f.Write(append(line, '\n'))
	f.Sync()
	f.Close()
}

func main() {
	switch os.Getenv("TESTCHILD_MODE") {
	case "sleep":
		if os.Getenv("TESTCHILD_GRANDCHILD_IGNORE_TERM") == "1" {
			signal.Ignore(syscall.SIGTERM)
		}
		for { // not select{}: the runtime would end a program with nothing left to run
			time.Sleep(time.Hour)
		}
	case "daemonize":
		pid, err := startSleeper(true)
		if err != nil {
			os.Exit(4)
		}
		logEvent("grandchild", pid)
		os.Exit(0)
	}
	if os.Getenv("TESTCHILD_LOG") == "" {
		fmt.Fprintln(os.Stderr, "testchild: TESTCHILD_LOG is not set")
		os.Exit(2)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	alloc := make(chan os.Signal, 1)
	signal.Notify(alloc, syscall.SIGUSR1)
	if path := os.Getenv("TESTCHILD_EXCLUSIVE"); path != "" {
		lockExclusive(path)
	}
	logEvent("start", 0)
	if dir := os.Getenv("TESTCHILD_HEARTBEAT_DIR"); dir != "" {
		go heartbeat(dir)
	}
	if n, err := strconv.Atoi(os.Getenv("TESTCHILD_FILL_STDERR")); err == nil && n > 0 {
		// In the background: once the pipe is full the write blocks, and the child must go on
		// beating and answering signals.
		go func() { _, _ = os.Stderr.Write(make([]byte, n)) }()
	}

	switch os.Getenv("TESTCHILD_GRANDCHILD") {
	case "1", "setsid":
		if pid, err := startSleeper(os.Getenv("TESTCHILD_GRANDCHILD") == "setsid"); err == nil {
			logEvent("grandchild", pid)
		}
	case "daemon":
		self, _ := os.Executable()
		mid := exec.Command(self)
		mid.Env = append(os.Environ(), "TESTCHILD_MODE=daemonize")
		_ = mid.Run() // it logs the daemon's PID
	}
	var exitAfter <-chan time.Time
	if ms, err := strconv.Atoi(os.Getenv("TESTCHILD_EXIT_AFTER_MS")); err == nil {
		exitAfter = time.After(time.Duration(ms) * time.Millisecond)
	}
	for {
		select {
		case <-sigs:
			if os.Getenv("TESTCHILD_IGNORE_TERM") == "1" {
				logEvent("term-ignored", 0)
				continue
			}
			logEvent("stop", 0)
			os.Exit(0)
		case <-alloc:
			alloc = nil // once
			logEvent("alloc", 0)
			go allocate()
		case <-exitAfter:
			code, _ := strconv.Atoi(os.Getenv("TESTCHILD_EXIT_CODE"))
			logEvent("exit", 0)
			os.Exit(code)
		}
	}
}

// lockExclusive takes the lock on path for the life of the process, logging "overlap" if
// another child holds it. A raw descriptor, which no finalizer closes, keeps it locked until
// the process ends; what the child starts does not inherit it.
func lockExclusive(path string) {
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o666)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testchild:", err)
		os.Exit(3)
	}
	if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		return
	}
	logEvent("overlap", 0)
	for {
		if err := syscall.Flock(fd, syscall.LOCK_EX); err != syscall.EINTR {
			return
		}
	}
}

// hoard keeps what allocate allocated.
var hoard [][]byte

// allocate allocates memory 1 MiB at a time, touching every page, and keeps it.
func allocate() {
	for {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		hoard = append(hoard, b)
	}
}

// heartbeat writes the time to its file every 10 ms, in place, so that the file's content is
// when the child last ran.
func heartbeat(dir string) {
	f, err := os.Create(fmt.Sprintf("%s/%s-%d", dir, os.Getenv("SWARM_LEASE_FENCE"), os.Getpid()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "testchild:", err)
		os.Exit(3)
	}
	for {
		_, _ = f.WriteAt([]byte(fmt.Sprintf("%020d\n", time.Now().UnixNano())), 0)
		time.Sleep(10 * time.Millisecond)
	}
}

// startSleeper starts this binary sleeping, in a session of its own if setsid, and returns its
// PID; nobody waits for it.
func startSleeper(setsid bool) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	gc := exec.Command(self)
	gc.Env = append(os.Environ(), "TESTCHILD_MODE=sleep")
	gc.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
	if err := gc.Start(); err != nil {
		return 0, err
	}
	return gc.Process.Pid, nil
}
