package pipeline

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// writeModuleProxy lays out a GOPROXY directory (the go command's file:// protocol: @v/list,
// .info, .mod, .zip per version) holding every Go module of the tagged clone at the throwaway
// version, each zipped from its tag as the module proxy would.
func writeModuleProxy(t *testing.T, clone, proxy string) {
	t.Helper()
	version := "v" + throwawayVersion
	out, err := exec.Command("go", "-C", clone, "list", "-m", "-f", "{{.Path}} {{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		modPath, dir, _ := strings.Cut(line, " ")
		subdir, err := filepath.Rel(clone, dir)
		if err != nil {
			t.Fatal(err)
		}
		escaped, err := module.EscapePath(modPath)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Join(proxy, filepath.FromSlash(escaped), "@v")
		if err := os.MkdirAll(base, 0o755); err != nil {
			t.Fatal(err)
		}
		// The .mod is the go.mod at the tag, the one the go command will hash and read.
		goMod, err := exec.Command("git", "-C", clone, "show", version+":"+filepath.ToSlash(filepath.Join(subdir, "go.mod"))).Output()
		if err != nil {
			t.Fatalf("go.mod of %s at %s: %v", modPath, version, err)
		}
		info, _ := json.Marshal(map[string]any{"Version": version, "Time": time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
		writeFile(t, filepath.Join(base, "list"), []byte(version+"\n"))
		writeFile(t, filepath.Join(base, version+".info"), info)
		writeFile(t, filepath.Join(base, version+".mod"), goMod)
		zf, err := os.Create(filepath.Join(base, version+".zip"))
		if err != nil {
			t.Fatal(err)
		}
		if err := modzip.CreateFromVCS(zf, module.Version{Path: modPath, Version: version}, clone, version, filepath.ToSlash(subdir)); err != nil {
			t.Fatalf("zip of %s: %v", modPath, err)
		}
		if err := zf.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(t *testing.T, name string, content []byte) {
	t.Helper()
	if err := os.WriteFile(name, content, 0o644); err != nil {
		t.Fatal(err)
	}
}

// `go install …/cli/cmd/lfp-swarm-lease@vX.Y.Z` works outside the workspace against a module
// proxy that has the tagged modules: their go.mod files carry no replace directive and require
// each other at the release version. Third-party modules come from the machine's module cache
// (offline), then the configured proxy.
func TestGoInstallOfTheTaggedCLI(t *testing.T) {
	clone := taggedClone(t)
	proxy := filepath.Join(t.TempDir(), "proxy")
	writeModuleProxy(t, clone, proxy)
	for _, goMod := range []string{"cli/go.mod", "lease/go.mod", "server/go.mod", "clients/go/go.mod", "settings/go.mod"} {
		content, err := os.ReadFile(filepath.Join(clone, goMod))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(content), "replace") {
			t.Fatalf("%s at the tag has a replace directive", goMod)
		}
	}
	modCache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	defaultProxy, err := exec.Command("go", "env", "GOPROXY").Output()
	if err != nil {
		t.Fatal(err)
	}
	gobin := t.TempDir()
	cmd := exec.Command("go", "install", "github.com/regbo/lfp-swarm-lease/cli/cmd/lfp-swarm-lease@v"+throwawayVersion)
	cmd.Dir = t.TempDir() // outside any module or workspace
	cmd.Env = append(os.Environ(),
		"GOWORK=off", "GOBIN="+gobin,
		// A module cache of its own: the throwaway versions must neither come from an earlier
		// run's cache (the test would not see this run's modules) nor stay in the real one.
		// -modcacherw lets the test remove it.
		"GOMODCACHE="+filepath.Join(t.TempDir(), "modcache"), "GOFLAGS=-mod=mod -modcacherw",
		fmt.Sprintf("GOPROXY=file://%s,file://%s/cache/download,%s", proxy, strings.TrimSpace(string(modCache)), strings.TrimSpace(string(defaultProxy))),
		// The throwaway modules are in no checksum database.
		"GONOSUMDB=github.com/regbo/*",
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(gobin, "lfp-swarm-lease"), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("lfp-swarm-lease version: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "v"+throwawayVersion) {
		t.Fatalf("lfp-swarm-lease version = %q, want it to show v%s", out, throwawayVersion)
	}
}
