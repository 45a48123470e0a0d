//go:build unix

package settings

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A named pipe that takes a regular file's place between the stat and the open must neither
// block the open nor be read: readOpened, the part after the stat, is given one directly.
func TestReadOpenedRefusesAPipeWithoutBlocking(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := readOpened(fifo, MaxValueFile)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Fatalf("a pipe opened after the stat: %v, want ErrNotRegular", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("opening a pipe with no writer blocked")
	}
}
