package readme

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/release/internal/testrepo"
)

// block is a fenced code block of a Markdown file.
type block struct {
	lang, text string
}

// heading is a Markdown heading line: its level and title.
var heading = regexp.MustCompile(`^(#{1,6}) (.*)$`)

// sectionBlocks returns the fenced code blocks of the section of file (relative to the
// repository root) whose heading starts with title, up to the next heading of its level or
// above.
func sectionBlocks(t *testing.T, file, title string) []block {
	t.Helper()
	content, err := os.ReadFile(filepath.Join(testrepo.SourceRoot(), file))
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	level := 0
	var fence *block
	for _, line := range strings.Split(string(content), "\n") {
		if fence != nil {
			if strings.TrimSpace(line) == "```" {
				out = append(out, *fence)
				fence = nil
			} else {
				fence.text += line + "\n"
			}
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			switch {
			case level == 0 && strings.HasPrefix(m[2], title):
				level = len(m[1])
			case level > 0 && len(m[1]) <= level:
				return out
			}
			continue
		}
		if level > 0 && strings.HasPrefix(line, "```") {
			fence = &block{lang: strings.TrimPrefix(line, "```")}
		}
	}
	if level == 0 {
		t.Fatalf("%s has no section %q", file, title)
	}
	return out
}

// blocksOf are the blocks of language lang.
func blocksOf(blocks []block, lang string) []string {
	var out []string
	for _, b := range blocks {
		if b.lang == lang {
			out = append(out, b.text)
		}
	}
	return out
}

// The fresh clone shared by the tests, with the CLI built by the README's command.
var (
	cloneOnce sync.Once
	cloneRoot string // holds the clone, as lfp-swarm-lease, and the tests' projects next to it
	cloneErr  error
)

// buildCommand is the README's command that builds the binary, run in the clone.
const buildCommand = "go build -o bin/ ./cli/cmd/lfp-swarm-lease"

// freshClone returns the directory of a fresh clone — the work tree's files, committed or not,
// named lfp-swarm-lease as a clone is — with bin/lfp-swarm-lease built by the README's
// command. It is made once per test binary; tests may add to it.
func freshClone(t *testing.T) string {
	t.Helper()
	leasetest.Long(t, "builds the binary in a fresh copy of the repository and runs the README's commands")
	cloneOnce.Do(func() {
		if cloneRoot, cloneErr = os.MkdirTemp("", "readme-"); cloneErr != nil {
			return
		}
		dir := filepath.Join(cloneRoot, "lfp-swarm-lease")
		if cloneErr = testrepo.CopyWorkTree(dir); cloneErr != nil {
			return
		}
		cmd := exec.Command("bash", "-c", buildCommand)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			cloneErr = errors.New(buildCommand + ": " + err.Error() + "\n" + string(out))
		}
	})
	if cloneErr != nil {
		t.Fatalf("the fresh clone: %v", cloneErr)
	}
	return filepath.Join(cloneRoot, "lfp-swarm-lease")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cloneRoot != "" {
		os.RemoveAll(cloneRoot)
	}
	os.Exit(code)
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// asWritten is a command of the pages as the test runs it: the built binary for `go run` of
// the CLI (the same program), and for each of the pages' ports the test's own (ports maps
// "8080" to a free port, …), since another process of the machine may hold the pages'. Two
// commands that use one port in the pages use one port here too, so a collision in the pages
// is one here. Nothing else changes.
func asWritten(command string, ports map[string]string) string {
	command = strings.ReplaceAll(command, "go run ./cli/cmd/lfp-swarm-lease", "bin/lfp-swarm-lease")
	for readme, port := range ports {
		command = strings.ReplaceAll(command, ":"+readme, ":"+port)
	}
	return command
}

// environ is the commands' environment: the test's, with the file store's directory (serve's
// default) in the test's temporary directory.
func environ(t *testing.T) []string {
	return append(os.Environ(), "XDG_DATA_HOME="+t.TempDir())
}

// background starts command with bash in dir as a process group of its own, which the test's
// cleanup stops, and returns it.
func background(t *testing.T, dir, command string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("bash", "-c", command)
	cmd.Dir = dir
	cmd.Env = environ(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	log := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("%s:\n%s", command, log)
		}
	})
	return cmd
}

// waitHealthy waits until a server answers /healthz on port.
func waitHealthy(t *testing.T, port string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+port+"/healthz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no server answers on port %s", port)
		case <-time.After(100 * time.Millisecond): // polling: the server has no way to tell
		}
	}
}

// run runs command with bash in dir, within timeout, and returns its stdout.
func run(t *testing.T, dir, command string, timeout time.Duration, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-eo", "pipefail", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(environ(t), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s\nin %s: %v\nstdout: %s\nstderr: %s", command, dir, err, out, stderr.String())
	}
	return string(out)
}

// requireCommand skips a test whose tool is missing, and fails it under CI=true.
func requireCommand(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing and CI=true", name)
		}
		t.Skipf("%s is missing: %v", name, err)
	}
}
