package images

import "fmt"

// maxBuildOutput is how much of go build's output an error keeps: the end, where the compiler
// ends its list of errors and the exit reason is.
const maxBuildOutput = 4 << 10

// tailBuffer is an io.Writer that keeps the last limit bytes written to it, so that a build
// that prints megabytes cannot fill memory or an error message.
type tailBuffer struct {
	limit   int
	buf     []byte
	dropped int64
}

// Write keeps the newest bytes; it never fails, so the child is never stopped by it.
func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String is what was kept, after a note of how much came before it.
func (t *tailBuffer) String() string {
	if t.dropped == 0 {
		return string(t.buf)
	}
	return fmt.Sprintf("(%d earlier bytes dropped) …%s", t.dropped, t.buf)
}
