package pipeline

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `npm publish --dry-run` of the client in the throwaway release: the package is at the
// release version and ships its built code. The registry is a closed loopback port, so the
// dry run provably publishes nothing.
func TestNpmPublishDryRunOfTheClient(t *testing.T) {
	bun := requireCommand(t, "bun", "scripts/test.sh installs it: npm i -g bun@1.4.5")
	npm := requireCommand(t, "npm", "install Node.js 20")
	// A copy of the clone, since building writes into the tree other tests read.
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "--quiet", "--branch", "v"+throwawayVersion, taggedClone(t), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	run := func(dir, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr)
		}
		return string(out)
	}
	run(clone, bun, "install", "--frozen-lockfile")
	run(clone, bun, "run", "clients:build")
	out := run(filepath.Join(clone, "clients", "typescript"), npm, "publish", "--dry-run", "--json", "--access", "public", "--registry", "http://127.0.0.1:9/")
	var pack struct {
		Name    string `json:"name"`
		Version string `json:"version"`
		Files   []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	// npm 11 keys the report by package name; older versions print the object itself.
	var byName map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &byName); err == nil {
		if raw, ok := byName["@regbo/lfp-swarm-lease"]; ok {
			out = string(raw)
		}
	}
	if err := json.Unmarshal([]byte(out), &pack); err != nil {
		t.Fatalf("npm publish --dry-run --json: %v\n%s", err, out)
	}
	if pack.Name != "@regbo/lfp-swarm-lease" || pack.Version != throwawayVersion {
		t.Fatalf("npm would publish %s@%s, want @regbo/lfp-swarm-lease@%s", pack.Name, pack.Version, throwawayVersion)
	}
	var files []string
	for _, f := range pack.Files {
		files = append(files, f.Path)
	}
	for _, want := range []string{"dist/index.js", "dist/index.d.ts", "package.json", "README.md"} {
		found := false
		for _, f := range files {
			found = found || f == want
		}
		if !found {
			t.Errorf("the package lacks %s; files: %v", want, files)
		}
	}
}
