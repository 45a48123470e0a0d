// Package bounded collects output up to a limit, so that a chatty child process cannot exhaust
// the deployer's memory. (The files that settings name are read by the settings module's
// ReadFile, which the CLI shares.)
package bounded

import (
	"bytes"
	"fmt"
)

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
