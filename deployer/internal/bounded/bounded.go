// Package bounded reads files and collects output up to a limit, so that a setting pointed at
// /dev/zero, a huge file or a chatty child process cannot exhaust the deployer's memory.
package bounded

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrTooLarge is a file larger than the limit its reader allows.
var ErrTooLarge = errors.New("bounded: larger than the limit")

// ReadFile reads path like os.ReadFile, but at most limit bytes: a longer file (or an endless
// one such as /dev/zero) is an error matching ErrTooLarge that says the limit.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %s", ErrTooLarge, path, Size(limit))
	}
	return data, nil
}

// Size reads a limit as "64 KiB" or "1 MiB".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Buffer is an io.Writer that keeps the first Limit bytes written to it and counts the rest:
// a child process's output, kept for a message, never grows without bound. Writes never fail,
// so the child is not stopped by a full pipe.
type Buffer struct {
	// Limit is how many bytes are kept.
	Limit int
	buf   bytes.Buffer
	// dropped counts the bytes written beyond Limit.
	dropped int64
}

// Write keeps what fits under the limit.
func (b *Buffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := max(b.Limit-b.buf.Len(), 0); room < n {
		b.dropped += int64(n - room)
		p = p[:room]
	}
	b.buf.Write(p)
	return n, nil
}

// Kept is what was kept, without a note.
func (b *Buffer) Kept() string { return b.buf.String() }

// Truncated reports whether anything was dropped.
func (b *Buffer) Truncated() bool { return b.dropped > 0 }

// String is what was kept, followed by a note of how much was dropped.
func (b *Buffer) String() string {
	if b.dropped == 0 {
		return b.buf.String()
	}
	return fmt.Sprintf("%s… (%d more bytes)", b.buf.String(), b.dropped)
}
