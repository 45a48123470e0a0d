package contend

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// SupervisorConfig describes one `lfp-swarm-lease run` contender.
type SupervisorConfig struct {
	// Holder is its holder and task ID (its identity).
	Holder string
	// Host is the DOCKER_HOST of the manager it talks to (the Swarm store).
	Host string
	// Store, when set, is its store setting instead of the Swarm behind Host (an etcd:// URL).
	Store string
	// NetNS, when set, is the network namespace file it runs in (started through nsenter,
	// which execs it: the PID is the supervisor's).
	NetNS string
	// Env is added to its environment (other settings, such as etcd timeouts).
	Env []string
	// Namespace is the election.
	Namespace string
	// TTL, Grace (shutdown_timeout_ms), Poll (default_poll_ms) and Skew (max_clock_skew_ms)
	// are its lease settings.
	TTL, Grace, Poll, Skew time.Duration
	// Log is the children's shared event log. Its directory also keeps the supervisors'
	// incarnation locks (XDG_RUNTIME_DIR), which the test removes with it.
	Log string
}

// Supervisor is a running `lfp-swarm-lease run -- faultchild`.
type Supervisor struct {
	Config SupervisorConfig
	cmd    *exec.Cmd
	out    *leasetest.SyncBuffer
	done   chan struct{}
}

// StartSupervisor starts one supervisor; its output is kept for Output.
func StartSupervisor(bins Binaries, cfg SupervisorConfig) (*Supervisor, error) {
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	store := "swarm"
	if cfg.Store != "" {
		store = cfg.Store
	}
	cmd := inNetNS(cfg.NetNS, bins.Lease, "run", "--", bins.Child)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOSTNAME=fault-" + cfg.Holder,
		"DOCKER_HOST=" + cfg.Host,
		"SWARM_LEASE_STORE=" + store,
		"SWARM_LEASE_NAMESPACE=" + cfg.Namespace,
		"SWARM_LEASE_HOLDER_ID=" + cfg.Holder, "SWARM_LEASE_TASK_ID=" + cfg.Holder, "SWARM_LEASE_NODE_ID=" + cfg.Holder,
		"SWARM_LEASE_TTL_MS=" + ms(cfg.TTL),
		"SWARM_LEASE_SHUTDOWN_TIMEOUT_MS=" + ms(cfg.Grace),
		"SWARM_LEASE_DEFAULT_POLL_MS=" + ms(cfg.Poll),
		"SWARM_LEASE_MAX_CLOCK_SKEW_MS=" + ms(cfg.Skew),
		"SWARM_LEASE_LISTEN=off",
		"FAULTCHILD_LOG=" + cfg.Log,
		"XDG_RUNTIME_DIR=" + filepath.Dir(cfg.Log),
	}
	cmd.Env = append(cmd.Env, cfg.Env...)
	s := &Supervisor{Config: cfg, cmd: cmd, out: &leasetest.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.out, s.out
	// A test binary that dies (a timeout, SIGKILL) takes its contenders with it; the `run`
	// guard then stops the child's group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start supervisor %s: %w", cfg.Holder, err)
	}
	go func() { _ = cmd.Wait(); close(s.done) }()
	return s, nil
}

// inNetNS is the command of bin with args, started in the network namespace file netns through
// nsenter (which execs bin, keeping the PID) when netns is set.
func inNetNS(netns, bin string, args ...string) *exec.Cmd {
	if netns == "" {
		return exec.Command(bin, args...)
	}
	return exec.Command("nsenter", append([]string{"--net=" + netns, "--", bin}, args...)...)
}

// PID is the supervisor's process ID.
func (s *Supervisor) PID() int { return s.cmd.Process.Pid }

// Output is what the supervisor wrote to stdout and stderr so far.
func (s *Supervisor) Output() string { return s.out.String() }

// Stop thaws the supervisor if frozen, sends SIGTERM (it stops its child, releases and exits)
// and waits up to timeout before SIGKILL. It reports whether it exited by itself.
func (s *Supervisor) Stop(timeout time.Duration) bool {
	_ = s.Thaw()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return true
	case <-time.After(timeout):
		_ = s.cmd.Process.Kill()
		<-s.done
		return false
	}
}

// Freeze stops (SIGSTOP) the supervisor and every process below it — the guard and the child —
// as a frozen container would be. It returns the PIDs it froze.
func (s *Supervisor) Freeze() ([]int, error) {
	pids := append([]int{s.PID()}, Descendants(s.PID())...)
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			return pids, fmt.Errorf("freeze %d: %w", pid, err)
		}
	}
	return pids, nil
}

// Thaw resumes (SIGCONT) the supervisor and every process below it.
func (s *Supervisor) Thaw() error {
	var first error
	for _, pid := range append([]int{s.PID()}, Descendants(s.PID())...) {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Descendants returns the PIDs of every live process below pid, from /proc.
func Descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The fields after the command (which may hold spaces) start at the last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil {
				children[ppid] = append(children[ppid], p)
			}
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, children[p]...)
		queue = append(queue, children[p]...)
	}
	return out
}
