//go:build unix

package settings_test

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/settings"
)

// read runs ReadFile with a deadline: a reader that blocks fails the test instead of hanging
// it.
func read(t *testing.T, path string, limit int64) ([]byte, error) {
	t.Helper()
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := settings.ReadFile(path, limit)
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("ReadFile(%s) still blocked after 10 s", path)
		return nil, nil
	}
}

func write(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "value")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantRefused checks a refusal: a *FileError naming path, matching target, with problem in it
// and no byte of secret.
func wantRefused(t *testing.T, err error, path string, target error, problem, secret string) {
	t.Helper()
	var fe *settings.FileError
	if !errors.As(err, &fe) || !errors.Is(err, target) {
		t.Fatalf("%s: error %v (%T), want a *FileError matching %v", path, err, err, target)
	}
	if fe.Path != path || !strings.Contains(fe.Problem, problem) || fe.Fix == "" {
		t.Errorf("%s: %+v, want the path, a problem with %q and a fix", path, fe, problem)
	}
	if !strings.HasPrefix(err.Error(), path+" "+problem) {
		t.Errorf("message %q does not start with the path and the problem", err)
	}
	if secret != "" && strings.Contains(err.Error(), secret[:8]) {
		t.Errorf("message %q quotes the file's content", err)
	}
}

func TestReadFileReadsARegularFileUpToTheLimit(t *testing.T) {
	exact := write(t, strings.Repeat("x", 1024))
	if data, err := read(t, exact, 1024); err != nil || len(data) != 1024 {
		t.Fatalf("a file of exactly the limit: %d bytes, %v", len(data), err)
	}
	secret := "s3cr3t-" + strings.Repeat("k", 1024)
	over := write(t, secret)
	_, err := read(t, over, 1024)
	wantRefused(t, err, over, settings.ErrTooLarge, "is larger than 1 KiB", secret)
}

func TestReadFileFollowsASymlinkToARegularFile(t *testing.T) {
	target := write(t, "token\n")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if data, err := read(t, link, settings.MaxValueFile); err != nil || string(data) != "token\n" {
		t.Fatalf("through a symlink: %q, %v", data, err)
	}
}

func TestReadFileRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fifoLink := filepath.Join(dir, "fifo-link")
	if err := os.Symlink(fifo, fifoLink); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, problem string }{
		{"/dev/zero", "is a character device, not a regular file"},
		{fifo, "is a named pipe (FIFO), not a regular file"},
		{fifoLink, "is a named pipe (FIFO), not a regular file"},
		{dir, "is a directory, not a regular file"},
		{sock, "is a socket, not a regular file"},
	} {
		_, err := read(t, c.path, settings.MaxValueFile)
		wantRefused(t, err, c.path, settings.ErrNotRegular, c.problem, "")
	}
}

// A sparse file of 1 GiB is refused by its size, before a byte is read.
func TestReadFileRefusesALargeFileWithoutReadingIt(t *testing.T) {
	huge := filepath.Join(t.TempDir(), "huge")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	start := time.Now()
	_, err = read(t, huge, settings.MaxValueFile)
	wantRefused(t, err, huge, settings.ErrTooLarge, "is larger than 64 KiB", "")
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v: the size alone refuses it", d)
	}
}

// A file whose size says nothing (those of /proc say 0) is still read through the limit.
func TestReadFileStopsAtTheLimitWhateverTheSizeSays(t *testing.T) {
	const path = "/proc/self/maps"
	if info, err := os.Stat(path); err != nil || info.Size() != 0 {
		t.Skipf("%s: %v, size not 0", path, err)
	}
	_, err := read(t, path, 64)
	wantRefused(t, err, path, settings.ErrTooLarge, "is larger than 64 bytes", "")
}

func TestReadFileNamesWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	_, err := read(t, missing, settings.MaxValueFile)
	wantRefused(t, err, missing, fs.ErrNotExist, "does not exist", "")
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(missing, dangling); err != nil {
		t.Fatal(err)
	}
	_, err = read(t, dangling, settings.MaxValueFile)
	wantRefused(t, err, dangling, fs.ErrNotExist, "is a symbolic link to a file that does not exist", "")
	notDir := filepath.Join(write(t, "x"), "below")
	_, err = read(t, notDir, settings.MaxValueFile)
	wantRefused(t, err, notDir, syscall.ENOTDIR, "cannot be read (not a directory)", "")
}

func TestReadFileNamesAFileItMayNotRead(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads any file")
	}
	path := write(t, "secret-value")
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	_, err := read(t, path, settings.MaxValueFile)
	wantRefused(t, err, path, fs.ErrPermission, "cannot be read by this process (permission denied)", "secret-value")
}
