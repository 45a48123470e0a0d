package readme

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/release/internal/testrepo"
)

// The Quickstart's commands run as written from a fresh clone, in their order, on the file
// store: serve, then a room created and campaigned in by two candidates — the first leads,
// the second follows. Only what the Quickstart lists is needed: Go and curl.
func TestQuickstartRunsAsWritten(t *testing.T) {
	requireCommand(t, "curl")
	readme, err := os.ReadFile(filepath.Join(testrepo.SourceRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(string(readme)), " "), buildCommand) {
		t.Fatalf("the README no longer says %q, which builds the binary these tests run", buildCommand)
	}
	clone := freshClone(t)
	// The Quickstart's first two blocks: serve, then the campaign. (The whole test suite,
	// which it runs next, needs Docker.)
	blocks := blocksOf(sectionBlocks(t, "README.md", "Quickstart"), "sh")
	if len(blocks) < 2 {
		t.Fatalf("the Quickstart has %d sh blocks, want serve and then the campaign", len(blocks))
	}
	blocks = blocks[:2]
	for _, b := range blocks {
		if strings.Contains(b, "jq ") {
			t.Errorf("the Quickstart uses jq, which it does not list: %q", b)
		}
	}
	ports := serve(t, clone)
	out := run(t, clone, asWritten(blocks[1], ports), time.Minute)
	leader, follower := strings.Index(out, `"status":"leader"`), strings.Index(out, `"status":"follower"`)
	if leader < 0 || follower < leader || !strings.Contains(out, `"candidate_id":"worker-a"`) {
		t.Fatalf("the campaigns answered %s, want worker-a leading and then a follower", out)
	}
}

// corsFlag is how the READMEs tell a page of another origin to be allowed.
var corsFlag = regexp.MustCompile("--cors-allowed-origins\\s+(https?://[^\\s`)]+)")

// The READMEs' browser sections say what the server does about CORS: it answers a preflight
// of the origin they allow with serve's --cors-allowed-origins, and by default sends no CORS
// headers.
func TestTheREADMEsSayWhatTheServerDoesAboutCORS(t *testing.T) {
	clone := freshClone(t)
	for _, file := range []string{"README.md", "clients/typescript/README.md"} {
		content, err := os.ReadFile(filepath.Join(testrepo.SourceRoot(), file))
		if err != nil {
			t.Fatal(err)
		}
		m := corsFlag.FindStringSubmatch(string(content))
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

// project is a new directory for a reader's project next to the clone, as the README's
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

// The Go client works from a clone, before a release is published, by the README's steps in a
// module of one's own next to the clone: the program below, using the client, then builds and
// talks to the Quickstart's serve.
func TestTheGoClientFromAClone(t *testing.T) {
	clone := freshClone(t)
	var steps []string
	for _, b := range blocksOf(sectionBlocks(t, "README.md", "From Go"), "sh") {
		if strings.Contains(b, "go mod edit -replace") {
			steps = append(steps, b)
		}
	}
	if len(steps) != 1 {
		t.Fatalf("the README's From Go has %d blocks of steps for a clone, want 1", len(steps))
	}
	ports := serve(t, clone)
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
	run(t, app, steps[0], 5*time.Minute, "GOWORK=")
	out := run(t, app, "go run . http://127.0.0.1:"+ports["8080"], 5*time.Minute, "GOWORK=")
	if strings.TrimSpace(out) != "leader worker-a" {
		t.Fatalf("the program printed %q, want leader worker-a", out)
	}
}

// The README's walkthrough works in the order written, on one machine: the Quickstart's serve;
// the TypeScript client installed from a clone by the README's steps and its watch.mjs run
// against that serve; then the Python section's run replica next to serve — on a port of its
// own — and its watch.py.
func TestTheWalkthroughRunsInOrder(t *testing.T) {
	clone := freshClone(t)
	ports := serve(t, clone)

	t.Run("TypeScript", func(t *testing.T) {
		for _, tool := range []string{"bun", "npm", "node"} {
			requireCommand(t, tool)
		}
		blocks := sectionBlocks(t, "README.md", "From JavaScript and TypeScript")
		steps, scripts := blocksOf(blocks, "sh"), blocksOf(blocks, "js")
		if len(steps) == 0 || !strings.Contains(steps[0], "npm install ../lfp-swarm-lease/clients/typescript") || len(scripts) == 0 {
			t.Fatalf("the README's TypeScript section has no steps for a clone and no watch.mjs: %q", blocks)
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
		blocks := sectionBlocks(t, "README.md", "From Python")
		steps, scripts := blocksOf(blocks, "sh"), blocksOf(blocks, "python")
		if len(steps) < 2 || len(scripts) == 0 || !strings.HasPrefix(steps[0], "export PYTHONPATH=") {
			t.Fatalf("the README's Python section lacks its steps or watch.py: %q", blocks)
		}
		// The first step's first line (the source on the path); the wheel is its alternative.
		path, _, _ := strings.Cut(steps[0], "\n")
		background(t, clone, asWritten(steps[1], ports))
		waitHealthy(t, ports["8081"])
		waitHealthy(t, ports["8080"]) // the Quickstart's serve still answers next to it
		writeFile(t, clone, "watch.py", asWritten(scripts[0], ports))
		out := firstLines(t, clone, path+" && python3 watch.py", "replica-a leads with fence", time.Minute)
		t.Log(out)
	})
}
