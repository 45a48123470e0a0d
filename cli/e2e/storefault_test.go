package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// mountTmpfs mounts a tmpfs of size bytes at a new directory, unmounted at the end of the test.
// It needs root (CAP_SYS_ADMIN): elsewhere the test is skipped, except under CI=true.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0755", "tmpfs", dir).CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("cannot mount a tmpfs and CI=true: %v %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

type failureOut struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	Exit  int    `json:"exit_code"`
}

// TestStoreOnReadOnlyFileSystem: a file store on a read-only file system is "permission
// denied" (exit 11, code permission_denied) naming the path — not "store unreachable".
func TestStoreOnReadOnlyFileSystem(t *testing.T) {
	mnt := mountTmpfs(t, "1m")
	store := filepath.Join(mnt, "store")
	if err := os.Mkdir(store, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount read-only: %v %s", err, out)
	}
	env := []string{"SWARM_LEASE_STORE=file://" + store, "SWARM_LEASE_NAMESPACE=" + leasetest.Namespace(t), "SWARM_LEASE_HOLDER_ID=a"}
	r := cli(t, env, "try-acquire", "--json")
	expectCode(t, r, 11, "try-acquire on a read-only store")
	if out := decode[failureOut](t, r); out.Code != "permission_denied" || out.Exit != 11 {
		t.Fatalf("--json: %+v, want code permission_denied, exit_code 11", out)
	}
	if !strings.Contains(r.stderr, "permission denied") || !strings.Contains(r.stderr, store+"/") || strings.Contains(r.stderr, "unreachable") {
		t.Fatalf("the message should say permission denied and name a path in %s, not unreachable:\n%s", store, r.stderr)
	}
}

// TestStoreOutOfSpace: a write that needs space the store does not have — a new election's
// file — is exit 12, code store_full, naming the path, and leaves nothing partial; an existing
// election's writes go on meanwhile, since they rewrite blocks its file already has.
func TestStoreOutOfSpace(t *testing.T) {
	mnt := mountTmpfs(t, "64k")
	store := filepath.Join(mnt, "store")
	env := []string{"SWARM_LEASE_STORE=file://" + store, "SWARM_LEASE_NAMESPACE=" + leasetest.Namespace(t), "SWARM_LEASE_HOLDER_ID=a"}
	expectCode(t, cli(t, env, "init"), 0, "init while there is space")
	// Fill the file system: what is left is less than a page.
	fill, err := os.Create(filepath.Join(mnt, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	for _, err = fill.Write(make([]byte, 4096)); err == nil; _, err = fill.Write(make([]byte, 4096)) {
	}
	fill.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the tmpfs: %v, want ENOSPC", err)
	}
	expectCode(t, cli(t, env, "try-acquire"), 0, "try-acquire of the existing election on a full store")

	other := append(slices.Clone(env), "SWARM_LEASE_NAMESPACE="+leasetest.Namespace(t)+"-new") // the last value counts
	r := cli(t, other, "try-acquire", "--json")
	expectCode(t, r, 12, "try-acquire of a new election on a full store")
	if out := decode[failureOut](t, r); out.Code != "store_full" {
		t.Fatalf("--json: %+v, want code store_full", out)
	}
	if !strings.Contains(r.stderr, "no space left") || !strings.Contains(r.stderr, store+"/") {
		t.Fatalf("the message should say no space left and name a path in %s:\n%s", store, r.stderr)
	}
	// Nothing partial: the new election does not exist.
	if got := decode[inspectOut](t, cli(t, other, "inspect", "--json")); got.Exists {
		t.Fatalf("after a failed first write the new election is %+v, want none", got)
	}
}

// TestServeWithoutHome: with neither XDG_DATA_HOME nor HOME set, serve keeps its rooms in
// /var/lib/lfp-swarm-lease; a user who may not create it gets exit 11 naming it.
func TestServeWithoutHome(t *testing.T) {
	if os.Getuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root to run serve as another user, and CI=true")
		}
		t.Skip("needs root to run serve as another user")
	}
	if _, err := os.Stat("/var/lib/lfp-swarm-lease"); err == nil {
		t.Skip("/var/lib/lfp-swarm-lease exists on this host")
	}
	// The binary, where the unprivileged user may run it.
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} { // t.TempDir makes both 0700
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "lfp-swarm-lease")
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOSTNAME=not-a-container"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 11 {
		t.Fatalf("serve without HOME as nobody: exit %d (%v), want 11\n%s", code, err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "/var/lib/lfp-swarm-lease") || !strings.Contains(stderr.String(), "permission denied") {
		t.Fatalf("the message should name /var/lib/lfp-swarm-lease and say permission denied:\n%s", stderr.String())
	}
}
