package readme

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/release/internal/testrepo"
)

// step is a section of a page whose ```sh blocks the walkthrough runs: blocks says how many.
type step struct {
	file, section string
	blocks        int
}

// walkthrough is every section with commands to run, in the order a reader meets them: the
// README's, then those of the pages its commands moved to. TestEveryCommandIsRun holds every
// ```sh block of these pages to this list; commands for another machine are ```shell blocks.
var walkthrough = []step{
	{"README.md", "Quickstart", 1},
	{"README.md", "`run` in 60 seconds", 4},
	{"README.md", "`serve` and two curl calls", 1},
	{"docs/commands.md", "The one-shot commands", 1},
	{"docs/http-api.md", "Operators' commands", 1},
	{"docs/clients.md", "From Go", 1},
	{"docs/clients.md", "From JavaScript and TypeScript", 1},
	{"docs/clients.md", "From Python", 2},
}

// pages are the README and the pages its commands moved to: every ```sh block in them is run.
var pages = []string{"README.md", "docs/run.md", "docs/etcd.md", "docs/http-api.md", "docs/configuration.md",
	"docs/stores.md", "docs/commands.md", "docs/clients.md", "docs/contributing.md"}

// stepBlocks are the ```sh blocks of a step, which must be as many as the step says.
func stepBlocks(t *testing.T, s step) []string {
	t.Helper()
	blocks := blocksOf(sectionBlocks(t, s.file, s.section), "sh")
	if len(blocks) != s.blocks {
		t.Fatalf("%s, %s: %d sh blocks, want %d (change the walkthrough with the page)", s.file, s.section, len(blocks), s.blocks)
	}
	return blocks
}

// TestEveryCommandIsRun: every ```sh block of the README and of the pages its commands moved to
// is one the walkthrough runs, so that a command added there is run or marked for another
// machine (```shell); the README keeps the build command the tests use, no jq, and names every
// page of the list.
func TestEveryCommandIsRun(t *testing.T) {
	run := map[string]int{}
	for _, s := range walkthrough {
		run[s.file] += len(stepBlocks(t, s))
	}
	readme := readPage(t, "README.md")
	if !strings.Contains(strings.Join(strings.Fields(readme), " "), buildCommand) {
		t.Errorf("the README no longer says %q, which builds the binary these tests run", buildCommand)
	}
	for _, page := range pages {
		content := readPage(t, page)
		if n := strings.Count(content, "\n```sh\n"); n != run[page] {
			t.Errorf("%s has %d sh blocks, the walkthrough runs %d: run the new ones, or mark a command for another machine ```shell", page, n, run[page])
		}
		if strings.Contains(content, "| jq") || strings.Contains(content, "\njq ") {
			t.Errorf("%s uses jq, which the Quickstart does not list", page)
		}
		if page != "README.md" && !strings.Contains(readme, "("+page+")") {
			t.Errorf("the README does not link %s", page)
		}
	}
}

// readPage reads a page of the work tree.
func readPage(t *testing.T, page string) string {
	t.Helper()
	content, err := os.ReadFile(filepath.Join(testrepo.SourceRoot(), page))
	if err != nil {
		t.Fatal(err)
	}
	return string(content)
}

// TestTheWalkthroughRunsInOrder runs the README's commands and those of the pages they moved to,
// as written, in the order of the walkthrough, on one machine from a fresh clone: each port the
// pages name is one free port of the test's, shared by the steps that name it, so a port two
// steps take at once fails here as it would for a reader.
func TestTheWalkthroughRunsInOrder(t *testing.T) {
	requireCommand(t, "curl")
	clone := freshClone(t)
	ports := map[string]string{"8080": freePort(t), "8081": freePort(t), "8082": freePort(t), "8083": freePort(t)}
	blocks := map[string][]string{}
	for _, s := range walkthrough {
		blocks[s.file+"#"+s.section] = stepBlocks(t, s)
	}
	of := func(file, section string) []string { return blocks[file+"#"+section] }

	// The Quickstart's main job, which the later steps talk to.
	background(t, clone, asWritten(of("README.md", "Quickstart")[0], ports))
	waitHealthy(t, ports["8080"])

	t.Run("run in 60 seconds", func(t *testing.T) {
		b := of("README.md", "`run` in 60 seconds")
		run(t, clone, b[0], 5*time.Minute)
		// replica-a first, leading, then replica-b, following, as the README has them.
		var leader *exec.Cmd
		for i, holder := range []string{"replica-a", "replica-b"} {
			if !strings.Contains(b[1+i], "--holder-id "+holder) {
				t.Fatalf("block %d does not start %s: %q", 1+i, holder, b[1+i])
			}
			p := background(t, clone, asWritten(b[1+i], ports))
			if holder == "replica-a" {
				leader = p
				waitHolder(t, ports["8081"], holder)
			}
		}
		watch := startLines(t, clone, asWritten(b[3], ports))
		held := regexp.MustCompile(`^demo: held by (replica-[ab]) .*, fence (\d+),`)
		if m := watch.until(t, held, time.Minute); m[1] != "replica-a" {
			t.Fatalf("the watch shows %s holding, want replica-a", m[1])
		} else {
			// Ctrl-C in replica-a's terminal: SIGINT to its process group.
			if err := syscall.Kill(-leader.Process.Pid, syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			next := watch.until(t, held, time.Minute)
			for next[1] == "replica-a" { // a line of the old term may still come
				next = watch.until(t, held, time.Minute)
			}
			if a, b := atoi(m[2]), atoi(next[2]); b <= a {
				t.Fatalf("replica-b took over with fence %d, not above replica-a's %d", b, a)
			}
		}
	})

	t.Run("serve and two curl calls", func(t *testing.T) {
		out := run(t, clone, asWritten(of("README.md", "`serve` and two curl calls")[0], ports), time.Minute)
		leader, follower := strings.Index(out, `"status":"leader"`), strings.Index(out, `"status":"follower"`)
		if leader < 0 || follower < leader || !strings.Contains(out, `"candidate_id":"worker-a"`) {
			t.Fatalf("the campaigns answered %s, want worker-a leading and then a follower", out)
		}
	})

	t.Run("the one-shot commands", func(t *testing.T) {
		out := run(t, clone, of("docs/commands.md", "The one-shot commands")[0], time.Minute)
		if !strings.Contains(out, `"namespace": "nightly-report"`) || !strings.Contains(out, `"holder_id": "alice"`) ||
			!strings.Contains(out, "lfp-swarm-lease ") {
			t.Fatalf("the one-shot commands printed %s, want alice's term in inspect's JSON and the version", out)
		}
	})

	t.Run("operators' commands", func(t *testing.T) {
		out := run(t, clone, asWritten(of("docs/http-api.md", "Operators' commands")[0], ports), time.Minute)
		if !regexp.MustCompile(`(?m)^room [A-Za-z0-9_-]+: vacant$`).MatchString(out) {
			t.Fatalf("elections create and status printed %q, want a vacant room", out)
		}
	})

	t.Run("Go", func(t *testing.T) { goClient(t, clone, of("docs/clients.md", "From Go")[0], ports) })

	t.Run("TypeScript", func(t *testing.T) {
		for _, tool := range []string{"bun", "npm", "node"} {
			requireCommand(t, tool)
		}
		section := sectionBlocks(t, "docs/clients.md", "From JavaScript and TypeScript")
		steps, scripts := blocksOf(section, "sh"), blocksOf(section, "js")
		if !strings.Contains(steps[0], "npm install ../lfp-swarm-lease/clients/typescript") || len(scripts) == 0 {
			t.Fatalf("the TypeScript section has no steps for a clone and no watch.mjs: %q", section)
		}
		app := project(t, clone, "jsapp")
		run(t, app, "npm init -y >/dev/null", time.Minute)
		run(t, app, steps[0], 10*time.Minute)
		writeFile(t, app, "watch.mjs", asWritten(scripts[0], ports))
		out := run(t, app, "node watch.mjs", time.Minute)
		if !strings.Contains(out, "leader worker-a") || !strings.Contains(out, "vacant") {
			t.Fatalf("node watch.mjs printed %q, want worker-a leading, then the room vacant", out)
		}
	})

	t.Run("Python", func(t *testing.T) {
		requireCommand(t, "python3")
		steps := of("docs/clients.md", "From Python")
		scripts := blocksOf(sectionBlocks(t, "docs/clients.md", "From Python"), "python")
		if !strings.HasPrefix(steps[0], "export PYTHONPATH=") || len(scripts) == 0 {
			t.Fatalf("the Python section lacks its steps or watch.py: %q", steps)
		}
		background(t, clone, asWritten(steps[1], ports))
		waitHealthy(t, ports["8083"])
		waitHealthy(t, ports["8080"]) // the Quickstart's serve still answers next to it
		writeFile(t, clone, "watch.py", asWritten(scripts[0], ports))
		w := startLines(t, clone, strings.TrimSpace(steps[0])+" && python3 watch.py")
		w.until(t, regexp.MustCompile(`^replica-a leads with fence \d+$`), time.Minute)
	})
}

// atoi is a fence the watch printed.
func atoi(s string) uint64 {
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

// waitHolder waits until the controller on port says holder holds its election.
func waitHolder(t *testing.T, port, holder string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if resp, err := http.Get("http://127.0.0.1:" + port + "/v1/state"); err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			if strings.Contains(string(body), `"holder_id":"`+holder+`"`) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not hold the election on port %s within a minute", holder, port)
		}
		time.Sleep(100 * time.Millisecond) // polling: the controller has no way to tell
	}
}

// goClient runs the Go section's steps for a clone in a module of one's own next to the
// clone: the program below, using the client, then builds and talks to the Quickstart's serve.
func goClient(t *testing.T, clone, steps string, ports map[string]string) {
	if !strings.Contains(steps, "go mod edit -replace") {
		t.Fatalf("the Go section's steps for a clone are not go mod edit -replace: %q", steps)
	}
	app := project(t, clone, "goapp")
	run(t, app, "go mod init example.com/app", time.Minute)
	writeFile(t, app, "main.go", `package main

import (
	"context"
	"fmt"
	"os"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
)

func main() {
	ctx := context.Background()
	el, err := swarmlease.NewClient(os.Args[1])
	if err != nil {
		panic(err)
	}
	room, err := el.CreateRoom(ctx)
	if err != nil {
		panic(err)
	}
	res, err := el.Campaign(ctx, room.ID, swarmlease.CampaignRequest{CandidateID: "worker-a"})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, res.Leader.CandidateID)
}
`)
	run(t, app, steps, 5*time.Minute, "GOWORK=")
	out := run(t, app, "go run . http://127.0.0.1:"+ports["8080"], 5*time.Minute, "GOWORK=")
	if strings.TrimSpace(out) != "leader worker-a" {
		t.Fatalf("the program printed %q, want leader worker-a", out)
	}
}

// corsFlag is how the pages tell a page of another origin to be allowed.
var corsFlag = regexp.MustCompile("--cors-allowed-origins\\s+(https?://[^\\s`)]+)")

// The clients' browser sections say what the server does about CORS: it answers a preflight
// of the origin they allow with serve's --cors-allowed-origins, and by default sends no CORS
// headers.
func TestTheBrowserSectionsSayWhatTheServerDoesAboutCORS(t *testing.T) {
	clone := freshClone(t)
	for _, file := range []string{"docs/clients.md", "clients/typescript/README.md"} {
		m := corsFlag.FindStringSubmatch(readPage(t, file))
		if m == nil {
			t.Errorf("%s says nothing of serve's --cors-allowed-origins", file)
			continue
		}
		for _, allowed := range []bool{true, false} {
			port := freePort(t)
			command := "bin/lfp-swarm-lease serve --listen 127.0.0.1:" + port
			if allowed {
				command += " --cors-allowed-origins " + m[1]
			}
			background(t, clone, command)
			waitHealthy(t, port)
			req, _ := http.NewRequest(http.MethodOptions, "http://127.0.0.1:"+port+"/elections", nil)
			req.Header.Set("Origin", m[1])
			req.Header.Set("Access-Control-Request-Method", http.MethodPost)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			got := resp.Header.Get("Access-Control-Allow-Origin")
			if allowed && got != m[1] || !allowed && got != "" {
				t.Errorf("%s: a preflight of %s to serve (allowed: %v) got Access-Control-Allow-Origin %q", file, m[1], allowed, got)
			}
		}
	}
}

// writeFile writes content to dir/name.
func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// project is a new directory for a reader's project next to the clone, as the pages'
// ../lfp-swarm-lease has it.
func project(t *testing.T, clone, name string) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(clone), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// lines is the stdout of a command that runs until the test ends, line by line.
type lines struct {
	command string
	ch      chan string
	seen    strings.Builder
}

// startLines starts command with bash in dir as a process group of its own, which the test's
// cleanup stops, and reads its stdout.
func startLines(t *testing.T, dir, command string) *lines {
	t.Helper()
	cmd := exec.Command("bash", "-c", command)
	cmd.Dir = dir
	cmd.Env = environ(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = io.Discard
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	l := &lines{command: command, ch: make(chan string)}
	go func() {
		defer close(l.ch)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			l.ch <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for range l.ch { // drain, so that the reader ends
		}
		_ = cmd.Wait()
	})
	return l
}

// until reads lines until one matches re (within timeout) and returns its submatches.
func (l *lines) until(t *testing.T, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-l.ch:
			if !ok {
				t.Fatalf("%s ended before printing a line like %s:\n%s", l.command, re, l.seen.String())
			}
			fmt.Fprintln(&l.seen, line)
			if m := re.FindStringSubmatch(line); m != nil {
				return m
			}
		case <-deadline:
			t.Fatalf("%s printed no line like %s within %v:\n%s", l.command, re, timeout, l.seen.String())
		}
	}
}
