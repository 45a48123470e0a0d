package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
)

// TestRunCommandThatCannotStart: a command that is missing or not executable is a
// configuration error — exit 127 or 126, a message naming the command, and no term taken.
func TestRunCommandThatCannotStart(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(plain, []byte("not a program\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, command string
		code          int
	}{
		{"absolute path missing", "/nonexistent/command", 127},
		{"relative path missing", "./missing-command", 127},
		{"name not in PATH", "no-such-command-anywhere", 127},
		{"file without execute permission", plain, 126},
		{"directory", dir, 126},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, _ := fileRunEnv(t)
			cmd := exec.Command(binary, "run", "--", tc.command)
			cmd.Dir = dir
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOSTNAME=not-a-container", "SWARM_LEASE_HOLDER_ID=a"}, env...)
			done := make(chan struct{})
			var out []byte
			go func() { out, _ = cmd.CombinedOutput(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("run -- %s did not exit: it contends for a command that cannot start\n%s", tc.command, out)
			}
			if code := cmd.ProcessState.ExitCode(); code != tc.code {
				t.Fatalf("run -- %s exited %d, want %d\n%s", tc.command, code, tc.code, out)
			}
			if !strings.Contains(string(out), `command "`+tc.command+`"`) {
				t.Fatalf("the message does not name the command %q:\n%s", tc.command, out)
			}
			if strings.Contains(string(out), "acquired") {
				t.Fatalf("run took a term for a command that cannot start:\n%s", out)
			}
			if got := decode[inspectOut](t, cli(t, append([]string{"SWARM_LEASE_HOLDER_ID=b"}, env...), "inspect", "--json")); got.Exists || got.Acquired {
				t.Fatalf("the election was touched: %+v", got)
			}
		})
	}
}

// TestRunCommandFailsToExecAfterAcquiring: a command that passes the check but cannot be
// executed (its interpreter is missing) ends the first term: run releases and exits 127.
func TestRunCommandFailsToExecAfterAcquiring(t *testing.T) {
	env, _ := fileRunEnv(t)
	script := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(script, []byte("#!/nonexistent/interpreter\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env = append(env, "SWARM_LEASE_TTL_MS=30000")
	p := startProc(t, "run", append([]string{"SWARM_LEASE_HOLDER_ID=a"}, env...), "run", "--", script)
	if code := p.wait(t, 10*time.Second); code != 127 {
		t.Fatalf("run exited %d, want 127\n%s", code, p.out.String())
	}
	if n := strings.Count(p.out.String(), "msg=acquired"); n != 1 {
		t.Fatalf("%d terms, want 1:\n%s", n, p.out.String())
	}
	if got := decode[inspectOut](t, cli(t, append([]string{"SWARM_LEASE_HOLDER_ID=b"}, env...), "inspect", "--json")); got.Acquired {
		t.Fatalf("the lease is still held after run exited: %+v", got)
	}
}

// TestRunReleasesWhenItsStderrReaderIsGone: run's stderr is a pipe whose reader closes it; on
// SIGTERM run must still stop the child and release the lease (not die of SIGPIPE at its first
// log line and leave the lease held for the whole TTL).
func TestRunReleasesWhenItsStderrReaderIsGone(t *testing.T) {
	env, childLog := fileRunEnv(t)
	env = append(env, "SWARM_LEASE_TTL_MS=30000", "SWARM_LEASE_HOLDER_ID=a")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "run", "--", testChild(t))
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOSTNAME=not-a-container"}, env...)
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(r)
	for lines.Scan() && !strings.Contains(lines.Text(), `msg="child started"`) {
	}
	events := waitForEvents(t, childLog, 10*time.Second, "the child", func(ev []check.ChildEvent) bool { return countEvents(ev, "start") == 1 })
	child := startsOf(events)[0]
	r.Close() // the reader goes away

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	observer := append([]string{"SWARM_LEASE_HOLDER_ID=b"}, env[:len(env)-1]...)
	for {
		if got := decode[inspectOut](t, cli(t, observer, "inspect", "--json")); !got.Acquired {
			break
		}
		if time.Since(sent) > 5*time.Second {
			t.Fatal("the lease is still held 5 s after SIGTERM (TTL 30 s): run did not release it")
		}
		time.Sleep(50 * time.Millisecond) // poll interval
	}
	t.Logf("released %v after SIGTERM with no stderr reader", time.Since(sent).Round(time.Millisecond))
	waitGone(t, child.PID, 2*time.Second, "the child")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v (want exit 0 after SIGTERM)", err)
	}
}

// TestRunServerCommandThatCannotStart: the same check through an elections server: exit 127
// before any campaign (the server address is never contacted).
func TestRunServerCommandThatCannotStart(t *testing.T) {
	r := cli(t, []string{"SWARM_LEASE_SERVER=http://127.0.0.1:9", "SWARM_LEASE_ELECTION=nightly-report", "SWARM_LEASE_TTL_MS=30000"},
		"run", "--json", "--", "/nonexistent/command")
	expectCode(t, r, 127, "run --server -- /nonexistent/command")
	if out := decode[failureOut](t, r); out.Code != "command_not_found" {
		t.Fatalf("--json code %q, want command_not_found", out.Code)
	}
	if strings.Contains(r.stderr, "contending") {
		t.Fatalf("run contended for a command that cannot start:\n%s", r.stderr)
	}
}
