//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/settings/settingstest"
)

// repoRoot is the repository's work tree, where `bun run` and `go run` are documented to run.
const repoRoot = "../../.."

// documentedCodes are the exit codes of docs/deployer.md's table.
func documentedCodes(t *testing.T) map[int]bool {
	t.Helper()
	content, err := os.ReadFile(filepath.Join(repoRoot, "docs", "deployer.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(content), "## Exit codes")
	codes := map[int]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\| (\d+) \|`).FindAllStringSubmatch(table, -1) {
		code, _ := strconv.Atoi(m[1])
		codes[code] = true
	}
	return codes
}

// wayIn runs the deployer with args one way in from the repository's root — "binary", "go run"
// or "bun run" (the documented `bun run demo …`, whose scripts/exec-go.sh builds into cache) —
// with vars as its only deployer settings and an empty settings file, so that no .env of the
// work tree counts.
func wayIn(t *testing.T, way, cache string, vars []string, args ...string) settingstest.Result {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "empty.env")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	args = append(args, "--env-file", empty)
	var cmd *exec.Cmd
	switch way {
	case "binary":
		cmd = exec.Command(binary, args...)
	case "go run":
		cmd = exec.Command("go", append([]string{"run", "./deployer/cmd/deployer"}, args...)...)
	case "bun run":
		cmd = exec.Command("bun", append([]string{"run", "demo"}, args...)...)
	}
	cmd.Dir = repoRoot
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	// The program's cache of scripts/exec-go.sh is the test's; Go's build cache is the machine's.
	cmd.Env = append([]string{"GOCACHE=" + strings.TrimSpace(string(gocache)), "XDG_CACHE_HOME=" + cache}, vars...)
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "SWARM_LEASE_DEPLOY_") && name != "GOCACHE" && name != "XDG_CACHE_HOME" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return settingstest.Run(t, cmd, 5*time.Minute)
}

// Every documented way into the deployer — its binary, `go run`, and `bun run demo`, the
// README's — answers a settings error, a usage error and a Portainer that does not answer with
// the code docs/deployer.md documents and the deployer's own first line, the cause first: `bun
// run` adds nothing of its own (no "$ command", no "error: script … exited"), and `go run` exits
// 1 as Go does, with `exit status N` after the deployer's lines.
func TestEveryWayInKeepsTheExitCodeAndTheMessage(t *testing.T) {
	if _, err := exec.LookPath("bun"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("bun is missing and CI=true: %v", err)
		}
		t.Skipf("bun is missing: %v", err)
	}
	codes := documentedCodes(t)
	cache := t.TempDir()
	portainer := []string{"SWARM_LEASE_DEPLOY_PORTAINER_URL=http://127.0.0.1:9", "SWARM_LEASE_DEPLOY_ENDPOINT=1",
		"SWARM_LEASE_DEPLOY_PORTAINER_API_KEY=" + apiKey}
	for _, tc := range []struct {
		name  string
		vars  []string
		args  []string
		code  int
		first string // the start of the first line
	}{
		{"settings error", nil, []string{"deploy", "--dry-run"}, 2, "deployer: config: SWARM_LEASE_DEPLOY_PORTAINER_URL: not set"},
		{"usage error", nil, []string{"deploy", "--dryrun"}, 2, "deployer: unknown flag --dryrun: did you mean --dry-run?"},
		{"Portainer down", portainer, []string{"remove"}, 1, "deployer: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !codes[tc.code] {
				t.Fatalf("docs/deployer.md documents no exit code %d", tc.code)
			}
			bin := wayIn(t, "binary", cache, tc.vars, tc.args...)
			if bin.Code != tc.code || !strings.HasPrefix(bin.Stderr, tc.first) {
				t.Fatalf("binary: exit %d, want %d starting %q\nstderr: %s", bin.Code, tc.code, tc.first, bin.Brief())
			}
			if b := wayIn(t, "bun run", cache, tc.vars, tc.args...); b.Code != tc.code || b.Stderr != bin.Stderr || b.Stdout != bin.Stdout {
				t.Errorf("bun run demo: exit %d, stderr %q; want %d and the binary's own output %q", b.Code, b.Stderr, tc.code, bin.Stderr)
			}
			if g := wayIn(t, "go run", cache, tc.vars, tc.args...); g.Code != 1 || g.Stderr != bin.Stderr+"exit status "+strconv.Itoa(tc.code)+"\n" {
				t.Errorf("go run: exit %d, stderr %q; want 1, the binary's lines and exit status %d", g.Code, g.Stderr, tc.code)
			}
			noSecret(t, bin.Stdout+bin.Stderr, apiKey)
		})
	}
}
