package leasetest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// SmallFS mounts a tmpfs of size (mount(8) syntax, e.g. "4m") on a fresh directory for the
// test and unmounts it at the end: a real file system that runs out of space. It needs Linux
// and root; without them the test is skipped — except when CI=true, where it fails.
func SmallFS(t testing.TB, size string) string {
	t.Helper()
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a test that mounts a small tmpfs needs Linux and root, and CI=true")
		}
		t.Skip("mounting a small tmpfs needs Linux and root")
	}
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a %s tmpfs on %s: %v: %s", size, dir, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// Fill writes a file into dir until its file system is out of space and returns the file's
// path; removing it frees the space again.
func Fill(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", dir, err)
			}
			break
		}
	}
	// What a whole block no longer fits in.
	for {
		if _, err := f.Write(block[:512]); err != nil {
			return path
		}
	}
}
