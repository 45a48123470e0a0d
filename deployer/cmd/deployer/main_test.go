//go:build linux

package main

import (
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/settings"
	"github.com/regbo/lfp-swarm-lease/settings/settingstest"
)

// binary is the deployer built once for these tests, which run it as a process: what a file
// setting does to the process (its memory, a blocked open, a signal) shows only there.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "deployer-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "deployer")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// settingDeadline is how long a refusal of a setting's file may take: the process's start, git
// rev-parse and one stat, with room for a loaded machine.
const settingDeadline = 10 * time.Second

// deployer runs `deployer ARGS…` in a new git repository (the deployer works inside one)
// without a .env, with only vars of the deployer's settings.
func deployer(t *testing.T, vars []string, args ...string) settingstest.Result {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, vars...)
	return settingstest.Run(t, cmd, settingDeadline)
}

// portainer is enough of the settings to reach Portainer at url, but for the API key.
func portainer(url string) []string {
	return []string{"SWARM_LEASE_DEPLOY_PORTAINER_URL=" + url, "SWARM_LEASE_DEPLOY_ENDPOINT=1"}
}

// wantRefused checks an exit 2 whose message names the setting, the file and what is wrong,
// with the memory of a process that read nothing of the file.
func wantRefused(t *testing.T, r settingstest.Result, setting string, c settingstest.Case) {
	t.Helper()
	if r.Code != 2 {
		t.Errorf("exit %d, want 2\nstderr: %s", r.Code, r.Brief())
	}
	for _, want := range []string{setting, c.Path, c.Problem, "use a "} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Brief())
		}
	}
	if r.MaxRSS > 64<<20 {
		t.Errorf("peak memory %d MiB: the file was read without a bound", r.MaxRSS>>20)
	}
}

// Every file a setting names — a _FILE variable's, --env-file's, the CA bundle's — that is not a
// regular file within its limit exits 2 at once, naming it: reading /dev/zero or a 1 GiB file
// used to fill memory up to the limit, and a FIFO blocked the deployer for ever, deaf to
// SIGTERM and SIGINT.
func TestFileSettingsRefuseWhatIsNotASmallRegularFile(t *testing.T) {
	t.Run("_FILE", func(t *testing.T) {
		for _, c := range settingstest.BadFiles(t, settings.MaxValueFile) {
			t.Run(c.Name, func(t *testing.T) {
				r := deployer(t, append(portainer("http://127.0.0.1:9"), "SWARM_LEASE_DEPLOY_PORTAINER_API_KEY_FILE="+c.Path), "remove")
				wantRefused(t, r, "SWARM_LEASE_DEPLOY_PORTAINER_API_KEY_FILE", c)
			})
		}
	})
	t.Run("env-file", func(t *testing.T) {
		for _, c := range settingstest.BadFiles(t, 1<<20) {
			t.Run(c.Name, func(t *testing.T) {
				wantRefused(t, deployer(t, nil, "remove", "--env-file", c.Path), "--env-file", c)
			})
		}
	})
	t.Run("CA file", func(t *testing.T) {
		for _, c := range settingstest.BadFiles(t, 1<<20) {
			t.Run(c.Name, func(t *testing.T) {
				r := deployer(t, append(portainer("https://127.0.0.1:9"), "SWARM_LEASE_DEPLOY_PORTAINER_API_KEY=ptr_key",
					"SWARM_LEASE_DEPLOY_PORTAINER_CA_FILE="+c.Path), "remove")
				wantRefused(t, r, "SWARM_LEASE_DEPLOY_PORTAINER_CA_FILE", c)
			})
		}
	})
}

// Symbolic links to regular files, as mounted secrets often are, are read: the API key's
// _FILE, the .env and the CA bundle all through links, and Portainer (over TLS with that CA)
// receives the key from the file.
func TestFileSettingsReadSymlinksToRegularFiles(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("X-API-Key"))
		mu.Unlock()
		http.Error(w, `{"message":"unauthorized"}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	ca := settingstest.SymlinkTo(t, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
	key := settingstest.SymlinkTo(t, "ptr_fromAFile\n")
	envFile := settingstest.SymlinkTo(t, "SWARM_LEASE_DEPLOY_PORTAINER_CA_FILE="+ca+"\n")
	r := deployer(t, append(portainer(srv.URL), "SWARM_LEASE_DEPLOY_PORTAINER_API_KEY_FILE="+key), "remove", "--env-file", envFile)
	if r.Code != 1 || !strings.Contains(r.Stderr, "refused the credentials") {
		t.Errorf("exit %d, want 1 with Portainer's refusal of the key\nstderr: %s", r.Code, r.Brief())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) == 0 || keys[0] != "ptr_fromAFile" {
		t.Fatalf("Portainer received the keys %q, want the file's ptr_fromAFile", keys)
	}
}

// A secret's file that is too large is refused without a byte of it in the output.
func TestFileSettingsNeverPrintTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte("ptr_s3cr3t"+strings.Repeat("k", settings.MaxValueFile)), 0o600); err != nil {
		t.Fatal(err)
	}
	r := deployer(t, append(portainer("http://127.0.0.1:9"), "SWARM_LEASE_DEPLOY_PORTAINER_API_KEY_FILE="+path), "remove")
	if r.Code != 2 || !strings.Contains(r.Stderr, "larger than 64 KiB") {
		t.Fatalf("exit %d, want 2 with the limit\nstderr: %s", r.Code, r.Brief())
	}
	if strings.Contains(r.Stdout+r.Stderr, "s3cr3t") {
		t.Fatalf("the output quotes the file:\n%s", r.Brief())
	}
}

// outside runs `deployer ARGS…` in a directory that is in no git work tree.
func outside(t *testing.T, args ...string) settingstest.Result {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	// git looks no further up than the directory's parent, whatever /tmp is on this machine.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir)}
	return settingstest.Run(t, cmd, settingDeadline)
}

// Outside a git work tree only the commands that need the repository fail, and they say so:
// help, version and remove (which needs only the settings) work anywhere.
func TestOnlyWhatNeedsTheRepositoryNeedsGit(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"remove", "--help"}, {"deploy", "--help"}, {"version"}, {"--version"}} {
		if r := outside(t, args...); r.Code != 0 || r.Stdout == "" {
			t.Errorf("deployer %s outside git: exit %d, want 0 with output\nstderr: %s", strings.Join(args, " "), r.Code, r.Brief())
		}
	}
	for _, args := range [][]string{{"deploy", "--dry-run"}} {
		r := outside(t, args...)
		if r.Code != 1 || !strings.Contains(r.Stderr, "inside the repository's work tree") {
			t.Errorf("deployer %s outside git: exit %d, want 1 saying it needs the repository\nstderr: %s", strings.Join(args, " "), r.Code, r.Brief())
		}
	}
	// remove reaches its settings: the missing Portainer address is the error, not git.
	if r := outside(t, "remove"); r.Code != 2 || !strings.Contains(r.Stderr, "SWARM_LEASE_DEPLOY_PORTAINER_URL") {
		t.Errorf("deployer remove outside git: exit %d, want 2 naming the missing setting\nstderr: %s", r.Code, r.Brief())
	}
}
