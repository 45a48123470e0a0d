package bounded

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFileStopsAtTheLimit(t *testing.T) {
	if _, err := ReadFile("/dev/zero", 64<<10); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "64 KiB") {
		t.Errorf("/dev/zero: %v, want ErrTooLarge naming 64 KiB", err)
	}
	path := filepath.Join(t.TempDir(), "exact")
	if err := os.WriteFile(path, []byte(strings.Repeat("x", 1024)), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(path, 1024); err != nil || len(data) != 1024 {
		t.Errorf("a file of exactly the limit: %d bytes, %v", len(data), err)
	}
}

func TestBufferKeepsTheFirstBytes(t *testing.T) {
	b := &Buffer{Limit: 4}
	for _, s := range []string{"ab", "cdef", "gh"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v: a writer must take it all", s, n, err)
		}
	}
	if b.Kept() != "abcd" || !b.Truncated() || b.String() != "abcd… (4 more bytes)" {
		t.Errorf("kept %q, string %q", b.Kept(), b.String())
	}
}
