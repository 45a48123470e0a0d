//go:build unix

package supervisor

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// The control pipe carries run's messages to its guard, one JSON object a line: first the term
// (the command's environment and the term's deadline), then the new deadline after every
// renewal. Its end after the term means that run is gone, and the guard stops the command — on
// every Unix, also where the kernel has no parent-death signal.

// controlMessage is one line of the control pipe.
type controlMessage struct {
	// Term marks the first message, the term's: Env is then the command's whole environment,
	// each entry as bytes (base64 in JSON), so that a value that is not UTF-8 arrives intact.
	Term bool     `json:"term,omitempty"`
	Env  [][]byte `json:"env,omitempty"`
	// Deadline is the term's deadline as a reading of CLOCK_MONOTONIC in nanoseconds (0: none).
	Deadline int64 `json:"deadline_ns,omitempty"`
}

// envStrings is the term's environment as the command gets it.
func (m controlMessage) envStrings() []string {
	env := make([]string, len(m.Env))
	for i, kv := range m.Env {
		env[i] = string(kv)
	}
	return env
}

// maxControlLine bounds one message: an environment is far smaller (the kernel limits a
// process's arguments and environment to a few MiB together).
const maxControlLine = 16 << 20

// termWriteTimeout bounds the write of the term. The message fits in the pipe's buffer unless
// the environment is huge, so the write returns at once; a guard that has not taken it within
// this (stopped, or gone) is given up for a fresh one.
const termWriteTimeout = time.Second

// controlWriter is run's end of the control pipe. After the term, deadlines go out from a
// goroutine of their own, newest first: a guard that does not read (stopped) blocks that
// goroutine, never the caller.
type controlWriter struct {
	f       *os.File
	mu      sync.Mutex
	pending Deadline
	wake    chan struct{}
	closed  chan struct{}
	once    sync.Once
}

func newControlWriter(f *os.File) *controlWriter {
	return &controlWriter{f: f, wake: make(chan struct{}, 1), closed: make(chan struct{})}
}

// writeTerm sends the term, then starts forwarding deadlines.
func (w *controlWriter) writeTerm(env []string, deadline Deadline) error {
	raw := make([][]byte, len(env))
	for i, kv := range env {
		raw[i] = []byte(kv)
	}
	line, err := json.Marshal(controlMessage{Term: true, Env: raw, Deadline: deadline.ns})
	if err != nil {
		return fmt.Errorf("supervisor: encode the term: %w", err)
	}
	_ = w.f.SetWriteDeadline(time.Now().Add(termWriteTimeout))
	_, err = w.f.Write(append(line, '\n'))
	_ = w.f.SetWriteDeadline(time.Time{})
	if err != nil {
		return err
	}
	go w.forward()
	return nil
}

// send hands d to the forwarding goroutine without waiting; a deadline not yet written is
// replaced, since only the newest counts.
func (w *controlWriter) send(d Deadline) {
	w.mu.Lock()
	w.pending = d
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *controlWriter) forward() {
	for {
		select {
		case <-w.closed:
			return
		case <-w.wake:
		}
		w.mu.Lock()
		d := w.pending
		w.mu.Unlock()
		line, _ := json.Marshal(controlMessage{Deadline: d.ns})
		if _, err := w.f.Write(append(line, '\n')); err != nil {
			return // the guard is gone, or the pipe closed
		}
	}
}

// close ends the pipe; a write in progress returns.
func (w *controlWriter) close() {
	w.once.Do(func() {
		close(w.closed)
		_ = w.f.Close()
	})
}

// controlReader is the guard's end of the control pipe.
type controlReader struct{ r *bufio.Reader }

// controlReadSize is the reader's buffer: the term usually arrives in one read of it.
const controlReadSize = 64 << 10

func newControlReader(r io.Reader) *controlReader {
	return &controlReader{r: bufio.NewReaderSize(r, controlReadSize)}
}

// next reads one message; io.EOF when the pipe ended between messages.
func (c *controlReader) next() (controlMessage, error) {
	var msg controlMessage
	line, err := readLine(c.r, maxControlLine)
	if err != nil {
		return msg, err
	}
	if err := json.Unmarshal(line, &msg); err != nil {
		return msg, fmt.Errorf("unreadable control message: %w", err)
	}
	return msg, nil
}

// errLineTooLong: a control message over maxControlLine.
var errLineTooLong = errors.New("control message too long")

// readLine reads up to and without the next '\n', at most max bytes. A line cut short by the
// end of the pipe is io.ErrUnexpectedEOF: the writer died while writing it.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		if len(line)+len(part) > max+1 {
			return nil, errLineTooLong
		}
		if err == nil {
			if line == nil {
				return part[:len(part)-1], nil // the common case: no copy
			}
			line = append(line, part...)
			return line[:len(line)-1], nil
		}
		line = append(line, part...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// deadlines forwards the deadlines that follow the term on c until the pipe ends, then closes
// the returned channel; it stops early when quit is closed.
func (c *controlReader) deadlines(quit <-chan struct{}) <-chan Deadline {
	out := make(chan Deadline)
	go func() {
		defer close(out)
		for {
			msg, err := c.next()
			if err != nil {
				return
			}
			select {
			case out <- Deadline{ns: msg.Deadline}:
			case <-quit:
				return
			}
		}
	}()
	return out
}
