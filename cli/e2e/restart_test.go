package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// restartTries is how many times each restart scenario kills run and lets its loop start it
// again.
const restartTries = 20

// TestRunRestartedUnderItsIdentityNeverOverlaps: run under one holder id in a shell loop (what
// supervisord, runit or a systemd unit with KillMode=process do), SIGKILLed again and again.
// Each new run is another incarnation: it leaves its predecessor's live term alone until that
// run's command is gone — the guard stops it within the grace period — and takes the term as
// soon as nothing holds the predecessor's lock, long before the term's TTL. On the file store
// and on etcd, with a command that ignores SIGTERM (killed at the end of the grace period) and
// one that honours it: no two commands ever run at once (each child locks one file for its
// whole life: a child that finds it locked logs "overlap"), and every restarted command starts
// within the grace period + 2 s of the kill — before the lease could have expired.
func TestRunRestartedUnderItsIdentityNeverOverlaps(t *testing.T) {
	leasetest.Long(t, "restarts run in a shell loop twenty times per store and command")
	stores := []struct {
		name string
		env  func(t *testing.T) ([]string, string)
	}{
		{"file", fileRunEnv},
		{"etcd", func(t *testing.T) ([]string, string) {
			return etcdRunEnv(t, etcdStore(t).env[0][len("SWARM_LEASE_STORE="):])
		}},
	}
	for _, store := range stores {
		for _, ignoreTerm := range []bool{true, false} {
			name := store.name + "/honours-SIGTERM"
			if ignoreTerm {
				name = store.name + "/ignores-SIGTERM"
			}
			t.Run(name, func(t *testing.T) {
				env, childLog := store.env(t)
				restartLoop(t, env, childLog, ignoreTerm)
			})
		}
	}
}

// restartLoop runs `run` in a shell loop under one holder id, with a TTL of 5 s and a grace
// period of 500 ms, SIGKILLs it restartTries times — each time once its command has started —
// and checks what TestRunRestartedUnderItsIdentityNeverOverlaps promises.
func restartLoop(t *testing.T, env []string, childLog string, ignoreTerm bool) {
	const grace = 500 * time.Millisecond
	const restartBound = grace + 2*time.Second
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "run.pid")
	env = append(env, "SWARM_LEASE_HOLDER_ID=c1", "SWARM_LEASE_TTL_MS=5000",
		"SWARM_LEASE_SHUTDOWN_TIMEOUT_MS="+strconv.Itoa(int(grace.Milliseconds())), "SWARM_LEASE_LISTEN=off",
		"TESTCHILD_EXCLUSIVE="+filepath.Join(dir, "exclusive"), "XDG_RUNTIME_DIR="+filepath.Join(dir, "runtime"))
	if ignoreTerm {
		env = append(env, "TESTCHILD_IGNORE_TERM=1")
	}
	// The loop restarts run the moment it dies, and says which process the current one is.
	loop := fmt.Sprintf(`while :; do %q run -- %q & echo $! > %q.new; mv %q.new %q; wait $!; done`,
		binary, testChild(t), pidFile, pidFile, pidFile)
	startShell(t, env, loop)
	var killedAt []time.Time
	for i := 0; i < restartTries; i++ {
		events := waitForEvents(t, childLog, 20*time.Second, fmt.Sprintf("command %d", i+1),
			func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= i+1 })
		if i > 0 {
			start := startsOf(events)[i].Time()
			// A takeover at the expiry comes TTL − renew interval (3.3 s) after the kill at
			// the soonest: under this bound only evidence can have started the command, with
			// room for a loaded machine (seen: 0.57 s at most on an idle one).
			if took := start.Sub(killedAt[i-1]); took > restartBound {
				t.Errorf("restart %d: the command started %v after its predecessor's run was killed, want ≤ %v (grace + 2 s); the TTL is 5 s",
					i, took.Round(time.Millisecond), restartBound)
			}
		}
		pid := currentPID(t, pidFile)
		killedAt = append(killedAt, time.Now())
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill run %d: %v", pid, err)
		}
		waitGone(t, pid, 5*time.Second, "the killed run")
	}
	events := waitForEvents(t, childLog, 20*time.Second, "the last command",
		func(ev []check.ChildEvent) bool { return countEvents(ev, "start") >= restartTries+1 })
	if n := countEvents(events, "overlap"); n > 0 {
		t.Fatalf("%d commands started while another still ran:\n%s", n, check.DescribeEvents(events))
	}
	starts := startsOf(events)
	for i := 1; i < len(starts); i++ {
		if fenceOf(t, starts[i]) <= fenceOf(t, starts[i-1]) {
			t.Fatalf("fence %s after %s:\n%s", starts[i].Fence, starts[i-1].Fence, check.DescribeEvents(events))
		}
	}
	var worst time.Duration
	for i := 1; i < len(starts) && i <= len(killedAt); i++ {
		worst = max(worst, starts[i].Time().Sub(killedAt[i-1]))
	}
	t.Logf("%d restarts, 0 overlaps; kill → next command start at worst %v (grace %v)", restartTries, worst.Round(time.Millisecond), grace)
}

// currentPID reads the PID of the loop's current run, once the loop has written it for a run
// that still lives.
func currentPID(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(path)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && !processGone(pid) {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no live run in %s after 10 s", path)
		}
	}
}

// shellProc is a shell of the test's own, in a process group of its own.
type shellProc struct{ cmd *exec.Cmd }

// startShell runs script in sh with env (plus PATH and a HOSTNAME that is no container), in a
// process group of its own; its output is logged if the test failed.
func startShell(t *testing.T, env []string, script string) *shellProc {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOSTNAME=not-a-container"}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &shellProc{cmd: cmd}
	t.Cleanup(func() {
		s.stop()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("shell loop output:\n%s", out.String())
		}
	})
	return s
}

// stop kills the loop and the runs it started (its process group); their guards stop their
// commands as they would after any run's death.
func (s *shellProc) stop() { _ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) }

// TestTryAcquireByARestartedScript: a script that takes the lease with try-acquire --caller-pid
// $$ is the incarnation of its terms. Acquiring again for the same script starts a new term at
// once, as before — also through a wrapper (timeout puts itself in a process group of its own);
// another script under the same holder id waits (exit 75) while the first — or anything it left
// running in its process group — lives; once the first is killed with its group, its restarted
// successor acquires at once, long before the TTL of a minute. Without --caller-pid a
// try-acquire is a caller of its own: nothing proves its term's work gone.
func TestTryAcquireByARestartedScript(t *testing.T) {
	leasetest.Long(t, "runs scripts that call try-acquire")
	env, _ := fileRunEnv(t)
	env = append(env, "SWARM_LEASE_HOLDER_ID=script", "SWARM_LEASE_TTL_MS=60000")
	dir := t.TempDir()
	// The script acquires twice, the second time through timeout, says so, and works on.
	script := fmt.Sprintf(`%q try-acquire --caller-pid $$ >%s/$$.1 && timeout 10 %q try-acquire --caller-pid $$ >%s/$$.2 && echo ok >%s/$$.done; exec sleep 300`,
		binary, dir, binary, dir, dir)
	first := startShell(t, env, script)
	done := filepath.Join(dir, strconv.Itoa(first.cmd.Process.Pid)+".done")
	waitUntil(t, 10*time.Second, "the first script to acquire twice", func() (bool, string) {
		_, err := os.Stat(done)
		return err == nil, fmt.Sprint(err)
	})
	expectCode(t, cli(t, env, "try-acquire", "--caller-pid", strconv.Itoa(os.Getpid())), 75, "try-acquire by another caller while the first script lives")
	expectCode(t, cli(t, env, "try-acquire"), 75, "try-acquire without a caller while the first script lives")
	killed := time.Now()
	first.stop()
	_ = first.cmd.Wait()
	second := startShell(t, env, fmt.Sprintf(`%q try-acquire --caller-pid $$ --json >%s/second.json; echo $? >%s/second.code; exec sleep 300`, binary, dir, dir))
	defer second.stop()
	waitUntil(t, 10*time.Second, "the restarted script's try-acquire", func() (bool, string) {
		b, err := os.ReadFile(filepath.Join(dir, "second.code"))
		return err == nil && strings.TrimSpace(string(b)) != "", fmt.Sprint(err)
	})
	code, _ := os.ReadFile(filepath.Join(dir, "second.code"))
	out, _ := os.ReadFile(filepath.Join(dir, "second.json"))
	if strings.TrimSpace(string(code)) != "0" {
		t.Fatalf("the restarted script's try-acquire exited %s, want 0 (its predecessor is gone): %s", code, out)
	}
	if took := time.Since(killed); took > 10*time.Second {
		t.Fatalf("the restarted script acquired %v after its predecessor was killed", took)
	}
	// A term taken without a caller is proven gone by nothing: the second script's term held,
	// a caller-less try-acquire's term is not taken over by another even once it has exited.
	second.stop()
	_ = second.cmd.Wait()
	env2 := append(env[:len(env):len(env)], "SWARM_LEASE_NAMESPACE=caller-less-"+strconv.Itoa(os.Getpid()))
	expectCode(t, cli(t, env2, "try-acquire"), 0, "a caller-less try-acquire")
	expectCode(t, cli(t, env2, "try-acquire", "--caller-pid", strconv.Itoa(os.Getpid())), 75, "another caller after the caller-less one exited")
}

// TestRunCommandCannotReleaseItsIncarnation: a command that unlocks its descriptor 3 (its own
// lock on the incarnation's lock file) releases only its own lock: run and its guard hold theirs,
// and a run of another holder on the same host still waits — the command lives.
func TestRunCommandCannotReleaseItsIncarnation(t *testing.T) {
	leasetest.Long(t, "watches two supervisors for a few seconds")
	env, childLog := fileRunEnv(t)
	env = append(env, "SWARM_LEASE_TTL_MS=30000", "XDG_RUNTIME_DIR="+t.TempDir())
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	a := startProc(t, "run a", append([]string{"SWARM_LEASE_HOLDER_ID=a"}, env...), "run", "--",
		"/bin/sh", "-c", "flock -u 3 && touch "+marker+" && exec sleep 300")
	waitUntil(t, 10*time.Second, "a's command to unlock its descriptor 3", func() (bool, string) {
		_, err := os.Stat(marker)
		return err == nil, a.out.String()
	})
	b := startRun(t, env, "b")
	time.Sleep(3 * time.Second) // the span in which b must not take over: time passing is tested
	if n := countEvents(readChildEvents(t, childLog), "start"); n != 0 || strings.Contains(b.out.String(), "evidence=") {
		t.Fatalf("b took over while a's command ran (%d children):\n%s", n, b.out.String())
	}
}
